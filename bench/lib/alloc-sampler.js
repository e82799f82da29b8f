'use strict';
/**
 * Preloaded into a bench-run service (`node -r bench/lib/alloc-sampler.js`): V8's sampling heap profiler,
 * counting objects the GC has already collected too (a sale's garbage is nearly all it allocates, and plain
 * `--heap-prof` keeps only what is still alive at the end). The first SIGUSR2 starts sampling; the second stops
 * it and writes the profile to $ALLOC_PROFILE_OUT (written whole, under a temporary name, then renamed).
 */
const fs = require('node:fs');
const inspector = require('node:inspector');

const out = process.env.ALLOC_PROFILE_OUT;
if (out) {
  const session = new inspector.Session();
  session.connect();
  let sampling = false;
  process.on('SIGUSR2', () => {
    if (!sampling) {
      sampling = true;
      session.post('HeapProfiler.enable', () => session.post('HeapProfiler.startSampling', {
        samplingInterval: 8192, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true,
      }));
      return;
    }
    session.post('HeapProfiler.stopSampling', (err, result) => {
      const text = err ? JSON.stringify({ error: String(err.message ?? err) }) : JSON.stringify(result.profile);
      fs.writeFileSync(`${out}.part`, text);
      fs.renameSync(`${out}.part`, out);
    });
  });
}
