/** The settlement routes' query and path (contract, "Settlements"), checked against openapi.json's parameters. */
import { InvalidRequest, type ErrorDetail } from './errors';
import openapi from './openapi.json';
import { compile, toDetails } from './validation';

const params = openapi.components.parameters;
const validateQuery = compile({
  type: 'object',
  additionalProperties: false,
  properties: { after: params.SettlementsAfter.schema, limit: params.SettlementsLimit.schema },
});
const validateBatch = compile(params.BatchKey.schema);
const WHOLE = /^(0|[1-9][0-9]{0,9})$/;

/** `GET /v1/settlements` query: `after` (a batch key) and `limit` (1..100, default 20). */
export function parseSettlementsQuery(query: unknown): { after: string | undefined; limit: number } {
  const source = typeof query === 'object' && query !== null ? (query as Record<string, unknown>) : {};
  const values: Record<string, unknown> = {};
  const details: ErrorDetail[] = [];
  for (const [name, value] of Object.entries(source)) {
    if (name === 'limit') {
      if (typeof value === 'string' && WHOLE.test(value)) values.limit = Number(value);
      else details.push({ path: 'query.limit', rule: 'integer' });
    } else values[name] = value; // `after` checked by its pattern; anything else is reported without its name
  }
  if (!validateQuery(values)) details.push(...toDetails('query', validateQuery.errors));
  if (details.length > 0) throw new InvalidRequest(details);
  return { after: values.after as string | undefined, limit: (values.limit as number | undefined) ?? params.SettlementsLimit.schema.default };
}

export function parseBatchKey(value: unknown): string {
  if (typeof value !== 'string' || !validateBatch(value)) throw new InvalidRequest([{ path: 'path.batch', rule: 'pattern' }]);
  return value;
}
