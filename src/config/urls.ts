import { isIPv4 } from 'node:net';

/** The URL's scheme as the WHATWG parser reads it (`HTTP://` is `http:` too), or undefined. */
export function protocolOf(url: string): string | undefined {
  try {
    return new URL(url).protocol;
  } catch {
    return undefined;
  }
}

/** Loopback hosts: 127.0.0.0/8, ::1 and localhost (the parser has already normalised forms like 0x7f.1). */
export function isLoopbackUrl(url: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase();
  } catch {
    return false;
  }
  if (host === 'localhost' || host === '[::1]') return true;
  return isIPv4(host) && host.startsWith('127.');
}
