/** swagger-ui-dist ships no types; the one function /docs uses (its absolute-path.js). */
declare module 'swagger-ui-dist' {
  export function getAbsoluteFSPath(): string;
}
