// `npm run docs:check` (in `npm run lint`): every relative link in the repository's Markdown resolves to a file
// (and, with `#anchor`, to a heading of that file, as GitHub names it), no link or path in code names a file
// outside the repository, and every alert rule of
// k8s/components/monitoring carries a runbook_url naming its page docs/runbooks/<alert>.md, which exists and
// answers the four questions; every page there belongs to a rule.
const fs = require('node:fs');
const path = require('node:path');
const { parse } = require('yaml');

const root = path.join(__dirname, '..');
const SKIP = new Set(['node_modules', 'dist', '.git', 'coverage']);
const RULES = path.join(root, 'k8s', 'components', 'monitoring', 'prometheusrule.yaml');
const RUNBOOKS = path.join(root, 'docs', 'runbooks');
/** The sections every runbook has, as its level-2 headings start. */
const RUNBOOK_SECTIONS = ['Meaning', 'Impact', 'Diagnosis', 'Mitigation'];

function markdownFiles(dir = root) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (SKIP.has(entry.name)) return [];
    const full = path.join(dir, entry.name);
    // Hidden folders hold no page of the repository's: test/unit/docs-links.test.ts writes its broken pages in
    // docs/.links-*, which `npm run lint` (beside the tests in .ci/run) must not read while they exist.
    if (entry.isDirectory()) return entry.name.startsWith('.') ? [] : markdownFiles(full);
    return entry.name.endsWith('.md') ? [full] : [];
  });
}

/** Text outside fenced code blocks and inline code spans, where links are links. */
function prose(text) {
  return text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's anchor for a heading (github-slugger): lower case, punctuation dropped, spaces as hyphens. */
function slug(heading) {
  const text = heading
    .replace(/`([^`]*)`/g, '$1')
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
}

const anchorCache = new Map();
function anchorsOf(file) {
  if (!anchorCache.has(file)) {
    const text = fs.readFileSync(file, 'utf8').replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
    const seen = new Map();
    const anchors = new Set();
    for (const [, heading] of text.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
      const base = slug(heading);
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      anchors.add(n === 0 ? base : `${base}-${n}`);
    }
    for (const [, id] of text.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(id);
    anchorCache.set(file, anchors);
  }
  return anchorCache.get(file);
}

/** Problems with the relative links of `files` (all the repository's Markdown by default), one line each. */
function linkProblems(files = markdownFiles()) {
  const problems = [];
  for (const file of files) {
    const where = path.relative(root, file);
    for (const [, target] of prose(fs.readFileSync(file, 'utf8')).matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: …
      const [pathPart, anchor] = target.split('#');
      const resolved = pathPart === '' ? file : path.resolve(path.dirname(file), decodeURIComponent(pathPart));
      if (path.relative(root, resolved).startsWith('..')) {
        problems.push(`${where}: ${target} leaves the repository`);
        continue;
      }
      if (!fs.existsSync(resolved)) {
        problems.push(`${where}: ${target} does not exist`);
        continue;
      }
      if (anchor !== undefined && resolved.endsWith('.md') && !anchorsOf(resolved).has(anchor)) problems.push(`${where}: ${target} names no heading of ${path.relative(root, resolved)}`);
    }
  }
  return problems;
}

/**
 * Paths the Markdown names outside the repository, in links or in code (`../shared/contract.md`): a clone has
 * none of them (issue 41: the README pointed at the project's shared folder). A relative path in a code span
 * or a fenced block that climbs a folder (`../`) and names a file must be one of the repository's.
 */
function outsideProblems(files = markdownFiles()) {
  const problems = [];
  for (const file of files) {
    const where = path.relative(root, file);
    const text = fs.readFileSync(file, 'utf8');
    for (const [candidate] of text.matchAll(/(?<![\w./-])(?:\.\.\/)+[\w.-]+(?:\/[\w.-]+)*\.[A-Za-z]{1,5}\b/g)) {
      const resolved = path.resolve(path.dirname(file), candidate);
      if (path.relative(root, resolved).startsWith('..')) problems.push(`${where}: ${candidate} is outside the repository (copy what is needed into docs/)`);
      else if (!fs.existsSync(resolved)) problems.push(`${where}: ${candidate} does not exist`);
    }
  }
  return problems;
}

/** The alert rules as shipped: name and runbook_url. */
function alertRules(file = RULES) {
  const doc = parse(fs.readFileSync(file, 'utf8'));
  return doc.spec.groups.flatMap((g) => g.rules).filter((r) => r.alert).map((r) => ({ alert: r.alert, runbookUrl: r.annotations?.runbook_url }));
}

/** Problems between the rules and docs/runbooks: a rule without its page, a page without its rule or sections. */
function runbookProblems(rules = alertRules(), dir = RUNBOOKS) {
  const problems = [];
  const pages = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.md')) : [];
  for (const { alert, runbookUrl } of rules) {
    const expected = `docs/runbooks/${alert}.md`;
    if (runbookUrl !== expected) problems.push(`${alert}: runbook_url is ${runbookUrl === undefined ? 'missing' : `"${runbookUrl}"`}, not "${expected}"`);
    if (!pages.includes(`${alert}.md`)) problems.push(`${alert}: ${expected} does not exist`);
  }
  for (const page of pages) {
    const alert = page.replace(/\.md$/, '');
    if (!rules.some((r) => r.alert === alert)) {
      problems.push(`docs/runbooks/${page}: names no alert of ${path.relative(root, RULES)}`);
      continue;
    }
    const text = fs.readFileSync(path.join(dir, page), 'utf8');
    if (!text.startsWith(`# ${alert}\n`)) problems.push(`docs/runbooks/${page}: its title is not "# ${alert}"`);
    const sections = [...text.matchAll(/^## (.+)$/gm)].map((m) => m[1]);
    for (const section of RUNBOOK_SECTIONS) if (!sections.some((s) => s.startsWith(section))) problems.push(`docs/runbooks/${page}: no "## ${section}" section`);
  }
  return problems;
}

module.exports = { linkProblems, outsideProblems, runbookProblems, alertRules, markdownFiles, slug, RUNBOOK_SECTIONS };

if (require.main === module) {
  const problems = [...linkProblems(), ...outsideProblems(), ...runbookProblems()];
  for (const p of problems) console.error(p);
  if (problems.length > 0) {
    console.error(`docs:check: ${problems.length} problem(s)`);
    process.exit(1);
  }
  console.log(`docs:check: ${markdownFiles().length} Markdown files, their relative links and the alerts' runbooks hold`);
}
