import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT, startServiceProcess, type ServiceProcess } from '../support/service-process';

/**
 * clients/typescript as the package a merchant installs (issue 41, item 8): built, packed with `npm pack`,
 * installed from the tarball into an empty project (its one dependency, openapi-fetch, from the npm registry or
 * npm's cache), type-checked as that project's code and run: a sale against the sandbox through what
 * `npm start` runs. Nothing of this repository is on that project's module path but the tarball.
 */
jest.setTimeout(180_000);

const PKG = path.join(ROOT, 'clients', 'typescript');
const TSC = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { cwd, env: { ...process.env, ...env }, timeout: 150_000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => (err ? reject(new Error(`${cmd} ${args.join(' ')}: ${err.message}\n${stderr}\n${stdout}`)) : resolve(stdout)));
  });
}

const CONSUMER = `import { createTokengateClient, type Sale } from '@tokengate/client';

async function main(): Promise<void> {
  const api = createTokengateClient({ baseUrl: process.env.TG_URL as string, token: () => process.env.TG_TOKEN as string });
  const { data, error, response } = await api.POST('/v1/sales', {
    params: { header: { 'Idempotency-Key': 'pkg-' + Date.now() } },
    body: { customer: 'vty8kn121g3pp8mk', payment_method: 'uhuzjx8fdpavl5sea', amount: '4.20' },
  });
  if (error) throw new Error('sale refused: ' + error.error.code);
  const sale: Sale = data;
  console.log(JSON.stringify({ status: response.status, key: sale.key, result_code: sale.result_code, amount: sale.amount }));
}
void main();
`;

describe('the typed client as an installable package', () => {
  let service: ServiceProcess;
  let dir: string;
  beforeAll(async () => {
    service = await startServiceProcess({ NODE_ENV: 'development' });
    dir = mkdtempSync(path.join(os.tmpdir(), 'tokengate-client-pkg-'));
  });
  afterAll(async () => {
    await service?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
    // The build is the package's, not the repository's: in-repo code imports the sources.
    rmSync(path.join(PKG, 'dist'), { recursive: true, force: true });
  });

  it('when the package is packed, installed from its tarball into an empty project and used there, then it declares its dependencies, type-checks and runs a sale', async () => {
    const manifest = JSON.parse(readFileSync(path.join(PKG, 'package.json'), 'utf8')) as { name: string; version: string; main: string; types: string; dependencies: Record<string, string> };
    expect(manifest).toMatchObject({ name: '@tokengate/client', version: expect.stringMatching(/^\d+\.\d+\.\d+$/), main: 'dist/index.js', types: 'dist/index.d.ts' });
    expect(Object.keys(manifest.dependencies)).toEqual(['openapi-fetch']);
    // The package's build (its own `npm run build`), with this repository's TypeScript.
    await run(process.execPath, [TSC, '-p', path.join(PKG, 'tsconfig.json')], PKG);
    copyFileSync(path.join(PKG, 'schema.d.ts'), path.join(PKG, 'dist', 'schema.d.ts'));
    const packed = JSON.parse(await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], PKG)) as { filename: string; files: { path: string }[] }[];
    expect(packed[0]?.files.map((f) => f.path).sort()).toEqual(['README.md', 'dist/index.d.ts', 'dist/index.js', 'dist/schema.d.ts', 'package.json']);
    const tarball = path.join(dir, packed[0]?.filename ?? '');

    const project = path.join(dir, 'shop');
    await run('mkdir', ['-p', project], dir);
    writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'shop', version: '1.0.0', private: true }));
    await run('npm', ['install', tarball, '--no-audit', '--no-fund', '--prefer-offline'], project);
    writeFileSync(path.join(project, 'sale.ts'), CONSUMER);
    // The shop's own code sees `process` without @types/node: one ambient line.
    writeFileSync(path.join(project, 'env.d.ts'), 'declare const process: { env: Record<string, string | undefined> };\n');
    writeFileSync(path.join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions: { target: 'ES2022', lib: ['ES2022', 'DOM'], module: 'commonjs', moduleResolution: 'node', strict: true, types: [] }, files: ['env.d.ts', 'sale.ts'] }));
    await run(process.execPath, [TSC, '-p', 'tsconfig.json'], project);

    const token = (await run(process.execPath, [path.join(ROOT, 'dist', 'cli', 'token.js'), '--sub', 'pkg-shopper', '--custkey', 'vty8kn121g3pp8mk', '--scope', 'sales:create'], ROOT, { NODE_ENV: 'development' })).trim();
    const out = JSON.parse(await run(process.execPath, ['sale.js'], project, { TG_URL: service.url, TG_TOKEN: token })) as { status: number; key: string; result_code: string; amount: string };
    expect(out).toMatchObject({ status: 201, result_code: 'A', amount: '4.20' });
  });
});
