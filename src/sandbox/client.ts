import { randomBytes } from 'node:crypto';
import { authorizationHeader } from './auth';

/**
 * A tiny client for tests and scripts that talk to a sandbox directly (not the production gateway client).
 * Signs with a fresh random seed per call, as tokengate's client does.
 */

export interface SandboxReply {
  status: number;
  statusText: string;
  headers: Headers;
  text: string;
  /** Parsed body, or undefined when it is not JSON. */
  json: unknown;
}

export interface CallOptions {
  body?: unknown;
  /** Sent as is (e.g. malformed JSON); wins over `body`. */
  rawBody?: string;
  /** false = no Authorization header; a string = that header. Default: signed with apiKey/apiPin. */
  auth?: false | string;
  apiKey?: string;
  apiPin?: string;
  headers?: Record<string, string>;
  timeoutMs?: number;
}

export async function callSandbox(url: string, method: string, path: string, opts: CallOptions = {}): Promise<SandboxReply> {
  const headers: Record<string, string> = { 'Content-Type': 'application/json', ...opts.headers };
  if (opts.auth !== false) {
    headers.Authorization = typeof opts.auth === 'string' ? opts.auth : authorizationHeader(opts.apiKey ?? '_V87Qtb513Cd3vabM7RC0TbtJWeSo8p7', opts.apiPin ?? '123456', randomBytes(8).toString('hex'));
  }
  const body = opts.rawBody ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body));
  const res = await fetch(new URL(path, url), { method, headers, ...(body === undefined ? {} : { body }), signal: AbortSignal.timeout(opts.timeoutMs ?? 10_000) });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, statusText: res.statusText, headers: res.headers, text, json };
}
