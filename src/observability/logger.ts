import winston from 'winston';
import { Writable } from 'node:stream';
import type { Secret } from '../config/secret';
import { redactString, redactValue } from './redact';
import { activeTracing } from './tracing';

export type Logger = winston.Logger;

export interface LoggerOptions {
  level?: string;
  /** Secrets whose literal values must never appear, even if some code path leaks them into a string. */
  secrets?: readonly (Secret | undefined)[];
  /** Where JSON lines go; stdout by default. Tests pass a collecting stream. */
  stream?: NodeJS.WritableStream;
  defaultMeta?: Record<string, unknown>;
}


/**
 * winston logger writing JSON lines. Redaction is a format that runs before serialisation, on every entry:
 * sensitive field names, card numbers, credential shapes and registered secret values are replaced.
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const literals = (options.secrets ?? []).filter((s): s is Secret => !!s && s.length >= 4).map((s) => s.reveal());
  const redact = winston.format((info) => {
    const scrubbed = redactValue({ ...info }, literals) as Record<string, unknown>;
    for (const key of Object.keys(info)) delete (info as Record<string, unknown>)[key];
    Object.assign(info, scrubbed);
    info.message = typeof scrubbed.message === 'string' ? scrubbed.message : redactString(String(scrubbed.message ?? ''), literals);
    return info;
  });
  const logger = winston.createLogger({
    level: options.level ?? 'info',
    defaultMeta: options.defaultMeta,
    format: winston.format.combine(winston.format.timestamp(), traceIds(), redact(), winston.format.json()),
    transports: [new winston.transports.Stream({ stream: options.stream ?? process.stdout })],
  });
  return skippingDisabledLevels(logger);
}

/**
 * winston runs every line through the formats (timestamp, redaction, JSON) before its transport drops one below
 * the level: 6 µs per debug line at level info, two of them per refused token (issue 30). Here a level that is
 * off returns at once. Child loggers inherit the methods (winston's child() is Object.create of its parent).
 */
function skippingDisabledLevels(logger: Logger): Logger {
  type LevelMethod = (this: Logger | undefined, ...args: unknown[]) => Logger;
  const methods = logger as unknown as Record<string, LevelMethod>;
  for (const level of Object.keys(logger.levels)) {
    const write = methods[level];
    if (typeof write !== 'function') continue;
    const value = logger.levels[level] as number;
    methods[level] = function (this: Logger | undefined, ...args: unknown[]) {
      const self = this ?? logger;
      // The logger's level decides alone: its one transport has none of its own. Read on every call, so a
      // level changed at run time takes effect.
      return value <= (self.levels[self.level] ?? -1) ? write.apply(self, args) : self;
    };
  }
  return logger;
}

/**
 * `trace_id` and `span_id` of the active span on every line written inside one, so a log line leads to its
 * trace. Read when the line is written: with tracing off, one call that returns undefined.
 */
const traceIds = winston.format((info) => {
  const ids = activeTracing()?.currentIds();
  if (ids) Object.assign(info, ids);
  return info;
});

/** A stream that keeps every line written to it: for tests that scan what the logger produced. */
export class CapturingStream extends Writable {
  readonly lines: string[] = [];
  override _write(chunk: Buffer | string, _enc: BufferEncoding, done: (error?: Error | null) => void): void {
    for (const line of chunk.toString().split('\n')) if (line) this.lines.push(line);
    done();
  }
  text(): string {
    return this.lines.join('\n');
  }
}

/** A logger that writes nowhere (for embedding the sandbox or tools quietly). */
export function silentLogger(): Logger {
  return winston.createLogger({ silent: true, transports: [new winston.transports.Console()] });
}

