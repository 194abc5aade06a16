import { defineConfig } from 'vitest/config';

// Tests import the built packages (`@kiln/core`), as users and piscina workers do: `npm test` builds first.
export default defineConfig({
  test: {
    include: ['packages/*/test/**/*.test.ts', 'tools/test/**/*.test.ts', 'executors/*/test/**/*.test.ts'],
    testTimeout: 180_000,
    hookTimeout: 180_000,
    reporters: ['default'],
  },
});
