import { defineConfig } from 'vitest/config';

// Tests import the built packages (`@kiln/core`), as users and piscina workers do: `npm test` builds first.
export default defineConfig({
  test: {
    include: ['packages/*/test/**/*.test.ts', 'tools/test/**/*.test.ts', 'executors/*/test/**/*.test.ts'],
    testTimeout: 180_000,
    // Two files at a time: most of the suite waits on child processes (Nx, npm, tsc), not this
    // process's CPU; on the 2-core CI machine one worker left the suite at ~22 min, over its budget.
    maxWorkers: 2,
    hookTimeout: 180_000,
    reporters: ['default'],
  },
});
