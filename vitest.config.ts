import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // What the browser tests poll for may take seconds on a loaded 2-core CI machine (a lazily loaded editor, a synced
    // change); a poll that holds passes as soon as it holds, so only a failing one waits this long.
    expect: { poll: { timeout: 10_000 } },
    env: {
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    },
  },
});
