// Browser tests against a real duet: each worker starts `duet serve` on a free
// port (e2e/fixtures.ts) and drives Debian's Chromium; no browser download.
import { defineConfig } from '@playwright/test';

export default defineConfig({
  testDir: 'e2e',
  // 2 cores: one browser, one server and its agents at a time keep timings honest.
  workers: 1,
  fullyParallel: false,
  forbidOnly: !!process.env.CI,
  // CI: one retry, reported as flaky (approvals-never-missed's jump and notify's
  // hidden-tab cases failed once each in full runs after the merges and pass
  // alone; open, see the closing note). Locally none, so flakes stay visible.
  retries: process.env.CI ? 1 : 0,
  timeout: 60_000,
  expect: { timeout: 15_000 },
  reporter: [['list']],
  outputDir: 'test-results/artifacts',
  use: {
    browserName: 'chromium',
    viewport: { width: 1280, height: 800 },
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    },
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
  },
});
