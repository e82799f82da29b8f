'use strict';
/**
 * Child processes of the benchmark: every one is registered here and killed on every exit path
 * (normal end, error, SIGINT/SIGTERM), by its own pid only. Everything listens on 127.0.0.1.
 */
const { spawn, fork } = require('node:child_process');
const net = require('node:net');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..', '..');
const children = new Set();

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function track(child, name) {
  let out = '';
  const keep = (d) => {
    out += d.toString();
    if (out.length > 200_000) out = out.slice(-100_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const entry = {
    name,
    child,
    output: () => out,
    exited,
    async stop(signal = 'SIGTERM', graceMs = 5000) {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill(signal);
        const t = setTimeout(() => child.kill('SIGKILL'), graceMs);
        await exited;
        clearTimeout(t);
      }
      children.delete(entry);
    },
  };
  children.add(entry);
  exited.then(() => children.delete(entry));
  return entry;
}

/** `node <script>` (or any command) as a tracked child; stdout/stderr captured. */
function start(name, command, args, env, options = {}) {
  const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], ...options });
  return track(child, name);
}

/** A forked Node child with an IPC channel (budget workers). */
function forkChild(name, script, args, env) {
  const child = fork(script, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
  return track(child, name);
}

async function waitFor(check, timeoutMs, what, proc) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (proc && (proc.child.exitCode !== null || proc.child.signalCode !== null)) break;
    try {
      if (await check()) return;
    } catch {
      // not up yet
    }
    await sleep(100);
  }
  throw new Error(`${what} did not become ready${proc ? `:\n${proc.output().slice(-3000)}` : ''}`);
}

async function stopAll() {
  await Promise.all([...children].map((c) => c.stop('SIGTERM', 3000).catch(() => undefined)));
}

/** Last-resort synchronous kill (process 'exit' handler cannot await). */
function killAllSync() {
  for (const c of children) {
    try {
      if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
}

let handlersInstalled = false;
function installCleanup() {
  if (handlersInstalled) return;
  handlersInstalled = true;
  process.on('exit', killAllSync);
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(sig, () => {
      process.stderr.write(`bench: ${sig}, stopping children\n`);
      stopAll().finally(() => process.exit(130));
    });
  }
}

module.exports = { ROOT, freePort, sleep, start, forkChild, waitFor, stopAll, killAllSync, installCleanup };
