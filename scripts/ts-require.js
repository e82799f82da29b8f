// Lets a script require src/**/*.ts without a build (TypeScript's own transpiler, no type check): the docs
// generators read the sources `npm run lint` checks, before anything is built.
const fs = require('node:fs');
const ts = require('typescript');

if (!require.extensions['.ts']) {
  require.extensions['.ts'] = (module, filename) => {
    const { outputText } = ts.transpileModule(fs.readFileSync(filename, 'utf8'), {
      fileName: filename,
      compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true, resolveJsonModule: true },
    });
    module._compile(outputText, filename);
  };
}
