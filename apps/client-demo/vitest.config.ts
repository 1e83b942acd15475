import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'bench/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Suites start PostgreSQL and the app; one file at a time keeps a 2-core machine responsive.
    fileParallelism: false,
  },
});
