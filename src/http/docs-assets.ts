/**
 * The /docs page, self-contained (the machines have no network, and the CSP allows only 'self'):
 * a static HTML shell, a stylesheet, and a script that fetches /openapi.json and renders every operation.
 * The script builds the DOM with textContent only, so nothing in the document can inject markup.
 */

export const DOCS_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<link rel="icon" href="data:,">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>tokengate API</title>
<link rel="stylesheet" href="/docs/style.css">
</head>
<body>
<header><h1 id="title">tokengate API</h1><p id="summary"></p><p><a href="/openapi.json">openapi.json</a></p></header>
<main id="operations"><p id="status">Loading /openapi.json…</p></main>
<script src="/docs/app.js"></script>
</body>
</html>
`;

export const DOCS_CSS = `body{font-family:system-ui,sans-serif;margin:0 auto;max-width:960px;padding:1rem;color:#222}
h1{margin-bottom:.2rem}section.op{border:1px solid #ccc;border-radius:6px;margin:1rem 0;padding:.5rem 1rem}
h2{font-size:1.1rem;font-family:ui-monospace,monospace}.method{font-weight:bold;margin-right:.4rem}
.method.get{color:#0a5}.method.post{color:#05a}table{border-collapse:collapse;width:100%;margin:.3rem 0}
th,td{border:1px solid #ddd;padding:.25rem .4rem;text-align:left;vertical-align:top;font-size:.9rem}
code{font-family:ui-monospace,monospace}.desc{white-space:pre-line}.error{color:#a00}
`;

export const DOCS_JS = `'use strict';
(function () {
  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }
  function resolve(doc, node) {
    var seen = 0;
    while (node && typeof node.$ref === 'string' && seen++ < 20) {
      var parts = node.$ref.replace(/^#\\//, '').split('/');
      var target = doc;
      for (var i = 0; i < parts.length && target; i++) target = target[parts[i].replace(/~1/g, '/').replace(/~0/g, '~')];
      var extra = {};
      for (var k in node) if (k !== '$ref') extra[k] = node[k];
      node = Object.assign({}, target || {}, extra);
    }
    return node || {};
  }
  function typeOf(doc, schema) {
    var s = resolve(doc, schema);
    var parts = [s.type || (s.allOf ? 'object' : 'any')];
    if (s.enum) parts.push('one of ' + s.enum.join(', '));
    if (s.pattern) parts.push('pattern ' + s.pattern);
    if (s.minimum !== undefined) parts.push('min ' + s.minimum);
    if (s.maximum !== undefined) parts.push('max ' + s.maximum);
    if (s.minLength !== undefined) parts.push('length ≥ ' + s.minLength);
    if (s.maxLength !== undefined) parts.push('length ≤ ' + s.maxLength);
    if (s.default !== undefined) parts.push('default ' + s.default);
    return parts.join('; ');
  }
  function table(headers, rows) {
    var t = el('table'), tr = el('tr');
    headers.forEach(function (h) { tr.appendChild(el('th', h)); });
    t.appendChild(tr);
    rows.forEach(function (r) {
      var row = el('tr');
      r.forEach(function (c) { row.appendChild(el('td', c)); });
      t.appendChild(row);
    });
    return t;
  }
  function fields(doc, schema, prefix, rows, depth) {
    var s = resolve(doc, schema);
    var required = s.required || [];
    var props = s.properties || {};
    Object.keys(props).forEach(function (name) {
      var p = resolve(doc, props[name]);
      rows.push([prefix + name, typeOf(doc, p), required.indexOf(name) >= 0 ? 'yes' : 'no', p.description || '']);
      if (p.properties && depth < 4) fields(doc, p, prefix + name + '.', rows, depth + 1);
    });
    return rows;
  }
  function render(doc) {
    var main = document.getElementById('operations');
    main.textContent = '';
    document.getElementById('title').textContent = (doc.info && doc.info.title || 'API') + ' ' + (doc.info && doc.info.version || '');
    document.getElementById('summary').textContent = doc.info && doc.info.summary || '';
    if (doc.info && doc.info.description) main.appendChild(el('div', doc.info.description, 'desc'));
    Object.keys(doc.paths || {}).forEach(function (path) {
      var item = doc.paths[path];
      ['get', 'post', 'put', 'patch', 'delete'].forEach(function (method) {
        var op = item[method];
        if (!op) return;
        var section = el('section', undefined, 'op');
        section.id = op.operationId || (method + path);
        var h = el('h2');
        h.appendChild(el('span', method.toUpperCase(), 'method ' + method));
        h.appendChild(document.createTextNode(' '));
        h.appendChild(el('span', path, 'path'));
        section.appendChild(h);
        if (op.summary) section.appendChild(el('p', op.summary, 'summary'));
        if (op.description) section.appendChild(el('p', op.description, 'desc'));
        var security = op.security || doc.security || [];
        var scopes = [];
        security.forEach(function (req) { Object.keys(req).forEach(function (k) { scopes.push(k + (req[k].length ? ' (' + req[k].join(', ') + ')' : '')); }); });
        section.appendChild(el('p', 'Security: ' + (scopes.length ? scopes.join(' or ') : 'none')));
        var params = (op.parameters || []).map(function (p) { return resolve(doc, p); });
        if (params.length) {
          section.appendChild(el('h3', 'Parameters'));
          section.appendChild(table(['name', 'in', 'type', 'required', 'description'], params.map(function (p) {
            return [p.name, p.in, typeOf(doc, p.schema), p.required ? 'yes' : 'no', p.description || ''];
          })));
        }
        var body = op.requestBody && resolve(doc, op.requestBody);
        if (body && body.content) {
          Object.keys(body.content).forEach(function (type) {
            section.appendChild(el('h3', 'Request body (' + type + ')'));
            section.appendChild(table(['field', 'type', 'required', 'description'], fields(doc, body.content[type].schema, '', [], 0)));
          });
        }
        section.appendChild(el('h3', 'Responses'));
        var rows = Object.keys(op.responses || {}).map(function (status) {
          var r = resolve(doc, op.responses[status]);
          var codes = [];
          Object.keys(r.content || {}).forEach(function (t) { Object.keys(r.content[t].examples || {}).forEach(function (c) { codes.push(c); }); });
          return [status, r.description || '', codes.join(', '), Object.keys(r.headers || {}).join(', ')];
        });
        section.appendChild(table(['status', 'description', 'error codes', 'headers'], rows));
        main.appendChild(section);
      });
    });
  }
  fetch('/openapi.json', { headers: { accept: 'application/json' } })
    .then(function (r) { if (!r.ok) throw new Error('HTTP ' + r.status); return r.json(); })
    .then(render)
    .catch(function (e) {
      var s = document.getElementById('status');
      if (s) { s.textContent = 'Could not load /openapi.json: ' + e.message; s.className = 'error'; }
    });
})();
`;
