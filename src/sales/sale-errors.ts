/**
 * A sale request whose shape the schema allowed but whose meaning does not hold, found before anything was sent
 * (stable rule codes; src/http/write-errors.ts maps it to 400 `invalid_request` naming the field).
 */
export class SaleInputError extends Error {
  readonly code = 'invalid_request';
  constructor(readonly path: string, readonly rule: string) {
    super('the sale request is invalid');
    this.name = 'SaleInputError';
  }
}
