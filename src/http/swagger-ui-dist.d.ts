/** swagger-ui-dist ships no types; the one function /docs uses, from its absolute-path.js (not its index). */
declare module 'swagger-ui-dist/absolute-path.js' {
  function getAbsoluteFSPath(): string;
  export default getAbsoluteFSPath;
}
