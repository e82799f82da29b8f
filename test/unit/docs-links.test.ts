import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The docs as a newcomer walks them (issue 29): the README is the front door, every page of docs/ is at most two
 * clicks from it and starts with the task it answers, and no relative link in the repository's Markdown is
 * broken (scripts/docs-check.js, run by `npm run lint`).
 */
const ROOT = path.join(__dirname, '..', '..');
interface DocsCheck {
  linkProblems(files?: string[]): string[];
  outsideProblems(files?: string[]): string[];
}
// eslint-disable-next-line @typescript-eslint/no-require-imports -- a CommonJS script without types
const docsCheck = require('../../scripts/docs-check') as DocsCheck;

const read = (file: string) => readFileSync(file, 'utf8');
const pages = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? pages(path.join(dir, e.name)) : e.name.endsWith('.md') ? [path.join(dir, e.name)] : []));

/** The Markdown files a file links to (relative links only, anchors dropped). */
function linksOf(file: string): string[] {
  const text = read(file).replace(/^```[\s\S]*?^```/gm, '');
  return [...text.matchAll(/\]\(([^)\s#]+\.md)(?:#[^)\s]*)?\)/g)].map((m) => path.resolve(path.dirname(file), m[1] as string));
}

describe('the README and docs/', () => {
  const readme = path.join(ROOT, 'README.md');

  it('when every Markdown file of the repository is checked, then each relative link opens a file, and each #anchor a heading of it', () => {
    expect(docsCheck.linkProblems()).toEqual([]);
  });

  it('when the repository\'s Markdown is read, then no link or path in code leaves the repository (a clone has nothing outside it)', () => {
    expect(docsCheck.outsideProblems()).toEqual([]);
  });

  it('when a page names a file outside the repository, in a link or in code, then the check names it', () => {
    const dir = mkdtempSync(path.join(ROOT, 'docs', '.outside-'));
    try {
      const page = path.join(dir, 'page.md');
      writeFileSync(page, 'The contract is `../../../shared/contract.md`; see [the spec](../../../shared/gateway-api-v2.md) and `../../README.md`.\n');
      const where = path.relative(ROOT, page);
      expect(docsCheck.outsideProblems([page])).toEqual([
        `${where}: ../../../shared/contract.md is outside the repository (copy what is needed into docs/)`,
        `${where}: ../../../shared/gateway-api-v2.md is outside the repository (copy what is needed into docs/)`,
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('when a link names a file or a heading that does not exist, then the check names each, and not the good ones', () => {
    const dir = mkdtempSync(path.join(ROOT, 'docs', '.links-'));
    try {
      const page = path.join(dir, 'page.md');
      writeFileSync(page, '# A page\n## Its part\n[ok](#its-part) [ok](../operations.md#health-and-metrics) [bad](missing.md) [bad](../operations.md#no-such-part) [bad](#nowhere)\n```sh\n[not a link](inside-code.md)\n```\n');
      const where = path.relative(ROOT, page);
      expect(docsCheck.linkProblems([page])).toEqual([
        `${where}: missing.md does not exist`,
        `${where}: ../operations.md#no-such-part names no heading of docs/operations.md`,
        `${where}: #nowhere names no heading of ${where}`,
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('when a newcomer opens the README, then it is short, keeps the two commands word for word, and every page of docs/ is at most two clicks away', () => {
    const text = read(readme);
    expect(text.split('\n').length).toBeLessThanOrEqual(150);
    expect(text).toContain('npm ci && npm start');
    expect(text).toContain('npm ci && npm test');
    const one = new Set(linksOf(readme));
    const two = new Set([...one].flatMap((f) => (f.endsWith('.md') ? linksOf(f) : [])));
    const far = pages(path.join(ROOT, 'docs')).filter((p) => !one.has(p) && !two.has(p));
    expect(far.map((p) => path.relative(ROOT, p))).toEqual([]);
  });

  it('when a page of docs/ is opened, then it starts with the task it answers', () => {
    const untold = pages(path.join(ROOT, 'docs')).filter((p) => {
      const first = read(p).split('\n').slice(1).find((l) => l.trim() !== '' && !l.startsWith('<!--'));
      return !first?.startsWith('**The task:**');
    });
    expect(untold.map((p) => path.relative(ROOT, p))).toEqual([]);
  });
});
