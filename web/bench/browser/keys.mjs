// Keystroke → painted glyph, duet's page against ttyd's, both running `cat`
// (the terminal's line discipline echoes each key). The pages take turns in
// blocks (duet, ttyd, ttyd, duet, ...), one key at a time with a pause
// between keys, as a person types; see probes.mjs for what is timed.
import { installKeyProbe } from './probes.mjs';
import { createSession, openDuet, openTtyd, press } from './pages.mjs';
import { log, sleep, summary, within } from './stats.mjs';

/** Characters per line before an Enter (not timed): keeps the row's text short and unique. */
const LINE = 48;
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz';

/** One page's typist: types a key, waits for its glyph painted, returns the sample. */
async function typist(ctx, page) {
  const cdp = await ctx.newCDPSession(page);
  await page.evaluate(installKeyProbe);
  let line = '';
  let n = 0;
  return async () => {
    if (line.length >= LINE) {
      await press(cdp, '\r');
      line = '';
      await sleep(300); // cat prints the line back; let it settle, untimed
    }
    const ch = ALPHABET[n++ % ALPHABET.length];
    line += ch;
    await page.evaluate((t) => { window.__keyProbe.arm(t); }, line);
    await press(cdp, ch);
    return within(page.evaluate(() => window.__keyProbe.wait()), 10_000, `the echo of key ${n}`);
  };
}

/**
 * Runs `keys` timed keys per page (after `warm` untimed ones), in blocks of
 * `block`, a random pause of `gapMs` [min, max] between keys.
 */
export async function keystrokes({ duetCtx, duet, ttydCtx, ttyd, keys, warm, block, gapMs }) {
  const id = await createSession(duetCtx, duet, 'cat');
  const pages = { duet: await openDuet(duetCtx, duet, id), ttyd: await openTtyd(ttydCtx, ttyd) };
  const types = { duet: await typist(duetCtx, pages.duet), ttyd: await typist(ttydCtx, pages.ttyd) };
  const samples = { duet: [], ttyd: [] };
  const gap = () => sleep(gapMs[0] + Math.random() * (gapMs[1] - gapMs[0]));
  for (const which of ['duet', 'ttyd']) {
    for (let i = 0; i < warm; i++) {
      await types[which]();
      await gap();
    }
  }
  const order = [];
  for (let b = 0; order.length * block < 2 * keys; b++) order.push(...(b % 2 === 0 ? ['duet', 'ttyd'] : ['ttyd', 'duet']));
  for (const which of order) {
    for (let i = 0; i < block && samples[which].length < keys; i++) {
      const r = await types[which]();
      samples[which].push(r);
      await gap();
    }
    log(`keys: ${which} ${samples[which].length}/${keys}`);
  }
  const renderers = {};
  for (const [which, page] of Object.entries(pages)) {
    renderers[which] = await page.evaluate(() => (document.querySelector('.xterm-rows') ? 'dom' : 'other'));
    await page.close();
  }
  await duetCtx.request.delete(`${duet.url}/api/sessions/${id}`);
  const figures = (xs) => ({ paint: summary(xs.map((s) => s.paint - s.key)), render: summary(xs.map((s) => s.render - s.key)) });
  return { duet: figures(samples.duet), ttyd: figures(samples.ttyd), renderers, raw: samples };
}
