import swc from 'unplugin-swc';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  // Nest's dependency injection needs decorator metadata, which only swc emits in tests.
  plugins: [swc.vite({ module: { type: 'es6' } })],
  test: {
    include: ['src/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Integration suites start real servers; running files one at a time keeps a 2-core
    // machine responsive and the timings of each suite meaningful.
    fileParallelism: false,
  },
});
