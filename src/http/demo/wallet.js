/*
 * The dev customer's stored cards on the /demo page (issue 26, item 7): each listed with its default mark, a
 * button to make it the default and one to remove it. Removal is final (the card is never charged again), so it
 * asks first, in place: "Yes, remove" or "Keep it" (Escape keeps it too). Every control is a button, reached with
 * Tab and named for screen readers after the card it acts on. A card can be renamed in place (its name is listed
 * after its expiry, so two cards of one type and last four tell apart). window.demoWallet.refresh(select) redraws
 * the list and checks the default card (issue 41: the first charge on load went to the partial-approval card, the
 * last listed); app.js charges the card whose radio is checked.
 */
(function () {
  'use strict';
  var p = window.demoPage;
  var $ = p.$;
  /** The cards as last listed, by key. */
  var cards = {};

  function button(text, className, name, onClick) {
    var b = document.createElement('button');
    b.type = 'button';
    b.className = className;
    b.textContent = text;
    if (name) b.setAttribute('aria-label', name);
    b.addEventListener('click', onClick);
    return b;
  }

  /** A card's row: its radio and label, its default mark, its buttons, and the removal's confirm step (hidden). */
  function row(m, checked) {
    var li = document.createElement('li');
    var id = 'pm-' + m.key;
    var input = document.createElement('input');
    input.type = 'radio';
    input.name = 'pm';
    input.value = m.key;
    input.id = id;
    input.checked = checked;
    var lab = document.createElement('label');
    lab.htmlFor = id;
    lab.textContent = p.fullLabel(m);
    li.appendChild(input);
    li.appendChild(lab);
    if (m.default) {
      var mark = document.createElement('span');
      mark.className = 'default-mark';
      mark.id = id + '-default';
      mark.textContent = 'Default';
      li.appendChild(mark);
      input.setAttribute('aria-describedby', mark.id);
    }
    var actions = document.createElement('span');
    actions.className = 'card-actions';
    if (!m.default) actions.appendChild(button('Make default', 'make-default', 'Make default: ' + p.fullLabel(m), function () { makeDefault(m); }));
    var rename = button('Rename', 'rename', 'Rename ' + p.fullLabel(m), function () { naming(true); });
    actions.appendChild(rename);
    var remove = button('Remove', 'remove', 'Remove ' + p.fullLabel(m), function () { ask(true); });
    actions.appendChild(remove);
    li.appendChild(actions);

    var form = document.createElement('form');
    form.className = 'rename-form';
    form.hidden = true;
    var nameInput = document.createElement('input');
    nameInput.id = id + '-name';
    nameInput.maxLength = 100;
    nameInput.autocomplete = 'off';
    nameInput.value = p.name(m);
    // Named by aria-label, not a <label>: the list's labels are the cards' own (one per radio).
    nameInput.setAttribute('aria-label', 'Name for ' + p.fullLabel(m));
    nameInput.placeholder = 'Card name';
    var save = button('Save name', 'save-name', '', function () { renameCard(m, nameInput.value.trim()); });
    save.type = 'submit';
    form.appendChild(nameInput);
    form.appendChild(save);
    form.appendChild(button('Cancel', 'cancel-rename', '', function () { naming(false); }));
    form.addEventListener('submit', function (e) { e.preventDefault(); renameCard(m, nameInput.value.trim()); });
    form.addEventListener('keydown', function (e) { if (e.key === 'Escape') naming(false); });
    li.appendChild(form);

    var confirm = document.createElement('div');
    confirm.className = 'confirm';
    confirm.hidden = true;
    confirm.setAttribute('role', 'group');
    confirm.setAttribute('aria-labelledby', id + '-confirm');
    var question = document.createElement('span');
    question.id = id + '-confirm';
    question.textContent = 'Remove ' + p.fullLabel(m) + '? It will never be charged again.';
    var keep = button('Keep it', 'keep', '', function () { ask(false); });
    confirm.appendChild(question);
    confirm.appendChild(button('Yes, remove', 'confirm-remove', '', function () { removeCard(m); }));
    confirm.appendChild(keep);
    confirm.addEventListener('keydown', function (e) { if (e.key === 'Escape') ask(false); });
    li.appendChild(confirm);

    /** Shows or leaves the confirm step; focus goes to its safe choice, then back to Remove. */
    function ask(open) {
      actions.hidden = open;
      confirm.hidden = !open;
      (open ? keep : remove).focus();
    }
    /** Shows or leaves the rename form; focus goes to its field, then back to Rename. */
    function naming(open) {
      actions.hidden = open;
      form.hidden = !open;
      (open ? nameInput : rename).focus();
    }
    return li;
  }

  /**
   * Redraws the list; the radio checked is `select` (a card just added or kept), else the default, else the
   * first: a change (a removal, a new default, a rename) leaves the default checked, never a fallback card.
   */
  function refresh(select) {
    return p.api('GET', p.methodsPath() + '?limit=100').then(function (res) {
      var ul = $('cards');
      ul.textContent = '';
      if (res.status !== 200) return p.failed('list the cards', res);
      var data = res.body.data;
      var chosen = data.filter(function (m) { return m.key === select; })[0] || data.filter(function (m) { return m.default; })[0] || data[0];
      cards = {};
      data.forEach(function (m) {
        cards[m.key] = m;
        ul.appendChild(row(m, m === chosen));
      });
      $('charge').disabled = data.length === 0;
    });
  }

  /** After a redraw the button used is gone: keyboard focus goes to the answer rather than the page's top. */
  function focusAnswer() { $('answer-line').focus(); }

  function makeDefault(m) {
    p.api('PATCH', p.methodsPath(m.key), { default: true }).then(function (res) {
      if (res.status === 200) p.show('approved', p.label(res.body) + ' is now your default', res.body);
      else p.failed('make ' + p.label(m) + ' your default', res);
      return refresh();
    }).then(focusAnswer);
  }

  function renameCard(m, name) {
    if (!name) return $(('pm-' + m.key) + '-name').focus();
    p.api('PATCH', p.methodsPath(m.key), { method_name: name }).then(function (res) {
      if (res.status === 200) p.show('approved', 'Renamed ' + p.fullLabel(m) + ' to “' + name + '”', res.body);
      else p.failed('rename ' + p.fullLabel(m), res);
      return refresh();
    }).then(focusAnswer);
  }

  function removeCard(m) {
    p.api('DELETE', p.methodsPath(m.key), undefined, true).then(function (res) {
      // 204 has no body: the line says it all, naming the card whole (two cards may share a type and last four).
      // A failure redraws too (the list then shows what is true now).
      if (res.status === 204) p.show('approved', 'Removed ' + p.fullLabel(m));
      else p.failed('remove ' + p.fullLabel(m), res);
      return refresh();
    }).then(focusAnswer);
  }

  window.demoWallet = {
    refresh: refresh,
    /** A listed card, by key (undefined once it is no longer listed). */
    card: function (key) { return cards[key]; },
    /** The keys of the cards listed. */
    keys: function () { return Object.keys(cards); },
  };
})();
