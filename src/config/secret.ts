import { inspect } from 'node:util';

const REDACTED = '[redacted]';

/**
 * Holds a credential (API PIN, API key, JWT secret) so that it never prints: string, JSON and
 * util.inspect forms are all `[redacted]`. The value is read only through `reveal()`, at the point of use.
 */
export class Secret {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
  }

  reveal(): string {
    return this.#value;
  }

  get length(): number {
    return this.#value.length;
  }

  equals(other: Secret): boolean {
    return this.#value === other.#value;
  }

  toString(): string {
    return REDACTED;
  }

  toJSON(): string {
    return REDACTED;
  }

  [inspect.custom](): string {
    return REDACTED;
  }

  [Symbol.toPrimitive](): string {
    return REDACTED;
  }
}
