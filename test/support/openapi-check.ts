import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import openapi from '../../src/http/openapi.json';

/**
 * Checks an answer of tokengate against openapi.json (issue 14, item 2): its status is documented for the
 * operation, its JSON body matches the documented schema, and every header the description marks required is
 * there. test/support/openapi-setup.ts runs it on every answer the suites receive (fetch and supertest), so the
 * document cannot drift from the code. Paths outside the description (the sandbox's /api/…, unknown routes,
 * the docs' static files) are not operations and are not checked.
 */
type Json = Record<string, unknown>;
const doc = openapi as unknown as { paths: Record<string, Record<string, Json>>; components: Json };

const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true });
addFormats(ajv);
ajv.addSchema({ $id: 'openapi', components: doc.components });

function deref(node: unknown): Json {
  let n = node as Json;
  while (n && typeof n.$ref === 'string') {
    const parts = (n.$ref as string).replace(/^#\//, '').split('/');
    n = parts.reduce<Json>((o, k) => o[k.replace(/~1/g, '/').replace(/~0/g, '~')] as Json, doc as unknown as Json);
  }
  return n;
}

/** `$ref: '#/components/…'` → `openapi#/components/…`, so the schema compiles against the added document. */
function rewrite(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(rewrite);
  if (!v || typeof v !== 'object') return v;
  return Object.fromEntries(Object.entries(v as Json).map(([k, x]) => [k, k === '$ref' && typeof x === 'string' ? `openapi${x}` : rewrite(x)]));
}

interface Operation {
  method: string;
  template: string;
  pattern: RegExp;
  responses: Record<string, Json>;
}

const operations: Operation[] = Object.entries(doc.paths).flatMap(([template, item]) =>
  Object.entries(item)
    .filter(([m]) => ['get', 'post', 'put', 'patch', 'delete'].includes(m))
    .map(([method, op]) => ({
      method: method.toUpperCase(),
      template,
      pattern: new RegExp(`^${template.replace(/[.]/g, '\\.').replace(/\{[^}]+\}/g, '[^/]+')}$`),
      responses: (op as { responses: Record<string, Json> }).responses,
    })));

const compiled = new Map<string, ValidateFunction>();
function validatorFor(key: string, schema: unknown): ValidateFunction {
  let v = compiled.get(key);
  if (!v) {
    v = ajv.compile(rewrite(schema) as Json);
    compiled.set(key, v);
  }
  return v;
}

export function operationOf(method: string, pathname: string): Operation | undefined {
  return operations.find((o) => o.method === method.toUpperCase() && o.pattern.test(pathname));
}

/** Problems with one answer, or [] (also [] for what is not an operation of the description). */
export function checkAnswer(method: string, url: string, status: number, headers: (name: string) => string | null | undefined, body: string): string[] {
  const pathname = new URL(url, 'http://x').pathname;
  const op = operationOf(method, pathname);
  if (!op) return [];
  const where = `${method.toUpperCase()} ${op.template} → ${status}`;
  const documented = op.responses[String(status)] ?? op.responses.default;
  if (!documented) return [`${where}: status not documented (documented: ${Object.keys(op.responses).join(', ')})`];
  const response = deref(documented);
  const problems: string[] = [];
  for (const [name, h] of Object.entries((response.headers ?? {}) as Json)) {
    const header = deref(h);
    if (header.required === true && !headers(name)) problems.push(`${where}: required header ${name} missing`);
  }
  // An answer in another documented media type (a settlement's CSV) is not checked as JSON.
  const type = (headers('content-type') ?? '').split(';')[0]?.trim() ?? '';
  if (type !== '' && type !== 'application/json' && ((response.content ?? {}) as Json)[type] !== undefined) return problems;
  const json = ((response.content ?? {}) as Json)['application/json'] as Json | undefined;
  if (json?.schema && body !== '') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      return [...problems, `${where}: body is not JSON`];
    }
    const validate = validatorFor(`${op.method} ${op.template} ${status}`, json.schema);
    if (!validate(parsed)) problems.push(`${where}: body does not match the schema: ${ajv.errorsText(validate.errors, { dataVar: 'body' })}`);
  }
  return problems;
}
