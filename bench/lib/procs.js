'use strict';
/**
 * Child processes of the benchmark: every one is registered here and killed on every exit path
 * (normal end, error, SIGINT/SIGTERM), by its own pid only. Everything listens on 127.0.0.1.
 */
const { spawn, fork } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..', '..');
const children = new Set();

/**
 * A port free on every interface, below Linux's ephemeral range (32768-60999): a port the OS picked for port 0
 * and then released is one any outbound connection (Redis clients, keep-alive pools) may take as its local port
 * before the server binds it.
 */
async function freePort() {
  for (let tries = 0; tries < 200; tries++) {
    const port = 20000 + Math.floor(Math.random() * 12000);
    const free = await new Promise((resolve) => {
      const srv = net.createServer();
      srv.unref();
      srv.once('error', () => resolve(false));
      srv.listen({ port, host: '0.0.0.0', exclusive: true }, () => srv.close(() => resolve(true)));
    });
    if (free) return port;
  }
  throw new Error('no free port in 20000-31999');
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** CPU seconds (user + system) a process has used so far, from /proc (Linux); NaN elsewhere. */
function cpuSeconds(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields[11], fields[12] = utime, stime (fields 14 and 15 of proc(5)), in clock ticks (USER_HZ = 100).
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

/**
 * Read and write system calls a process has made so far (proc(5), /proc/<pid>/io: syscr, syscw), or NaN. Exact
 * counts, unlike CPU time: what a change to batching does to the socket writes a sale costs shows here whatever
 * else the box is doing.
 */
function syscalls(pid) {
  try {
    const io = fs.readFileSync(`/proc/${pid}/io`, 'utf8');
    const field = (name) => Number(new RegExp(`^${name}: (\\d+)$`, 'm').exec(io)?.[1] ?? NaN);
    return { reads: field('syscr'), writes: field('syscw') };
  } catch {
    return { reads: NaN, writes: NaN };
  }
}

/**
 * Milliseconds a process's threads spent runnable but waiting for a core, so far (Linux schedstat, second field,
 * summed over /proc/<pid>/task/*); NaN elsewhere. On a shared 2-core box this is the latency no code change in
 * the process can remove: the open loop reports it per process so a tail can be told apart from our own work.
 */
function runQueueWaitMs(pid) {
  return schedstatMs(pid, 1);
}

/**
 * Milliseconds a process's threads have run on a core so far (schedstat, first field): its CPU time in
 * nanoseconds, where /proc/<pid>/stat counts in 10 ms ticks. NaN elsewhere.
 */
function onCpuMs(pid) {
  return schedstatMs(pid, 0);
}

function schedstatMs(pid, field) {
  try {
    let ns = 0;
    for (const task of fs.readdirSync(`/proc/${pid}/task`)) ns += Number(fs.readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[field]);
    return ns / 1e6;
  } catch {
    return NaN;
  }
}

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

/** Runs `fn(item, index)` over `items`, `width` at a time. */
async function pool(items, width, fn) {
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < items.length) {
      const i = next++;
      await fn(items[i], i);
    }
  }));
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

module.exports = { syscalls, ROOT, freePort, sleep, pool, cpuSeconds, runQueueWaitMs, onCpuMs, start, forkChild, waitFor, stopAll, killAllSync, installCleanup };
