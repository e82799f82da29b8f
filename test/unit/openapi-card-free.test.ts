import openapi from '../../src/http/openapi.json';
import { containsPan } from '../../src/card/pan';

// /openapi.json is served to anyone (no token) and the hostile-input suite treats a card number in any answer as
// a leak; its examples must describe card numbers without spelling one out.
describe('the published API description', () => {
  it('when served, then it carries no card number in any separator form', () => {
    expect(containsPan(JSON.stringify(openapi))).toBe(false);
    expect(containsPan(JSON.stringify(openapi, null, 2))).toBe(false);
  });
});
