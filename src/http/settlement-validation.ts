/** The settlement routes' query and path (contract, "Settlements"), checked against openapi.json's parameters. */
import { InvalidRequest } from './errors';
import openapi from './openapi.json';
import { compile, parsePagedQuery } from './validation';

const params = openapi.components.parameters;
const validateQuery = compile({
  type: 'object',
  additionalProperties: false,
  properties: { after: params.SettlementsAfter.schema, limit: params.SettlementsLimit.schema },
});
const validateBatch = compile(params.BatchKey.schema);

/** `GET /v1/settlements` query: `after` (a batch key) and `limit` (1..100, default 20). */
export function parseSettlementsQuery(query: unknown): { after: string | undefined; limit: number } {
  const { after, limit } = parsePagedQuery(query, validateQuery);
  return { after, limit: limit ?? params.SettlementsLimit.schema.default };
}

export function parseBatchKey(value: unknown): string {
  if (typeof value !== 'string' || !validateBatch(value)) throw new InvalidRequest([{ path: 'path.batch', rule: 'pattern' }]);
  return value;
}
