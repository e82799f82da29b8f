import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import Redis from 'ioredis';

const ROOT = path.join(__dirname, '..', '..');
const PATCHES = path.join(ROOT, 'patches');

function installedVersion(pkg: string): string {
  return (JSON.parse(readFileSync(path.join(ROOT, 'node_modules', pkg, 'package.json'), 'utf8')) as { version: string }).version;
}

describe('patches to installed packages (patches/README.md)', () => {
  const files = readdirSync(PATCHES).filter((f) => f.endsWith('.patch'));

  it('each names the exact version installed, so an upgrade has to revisit it', () => {
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      const [, pkg, version] = /^(.+)\+(\d+\.\d+\.\d+[^+]*)\.patch$/.exec(file) ?? [];
      expect({ file, installed: pkg && installedVersion(pkg) }).toEqual({ file, installed: version });
    }
  });

  it('ioredis: a pipeline has no per-instance length accessor, and length still counts its queued commands', () => {
    const client = new Redis({ lazyConnect: true, enableOfflineQueue: false });
    try {
      const pipeline = client.pipeline().get('a').set('b', 'c');
      expect(Object.getOwnPropertyDescriptor(pipeline, 'length')).toBeUndefined();
      expect(pipeline.length).toBe(2);
      expect(client.pipeline().length).toBe(0);
    } finally {
      client.disconnect();
    }
  });
});
