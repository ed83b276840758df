// Which renderer draws the terminal. xterm's DOM renderer always works; its
// WebGL renderer is faster on a real GPU but, on a software rasteriser
// (SwiftShader, llvmpipe: headless browsers, VMs, GPU blocklists) it drew
// nothing at devicePixelRatio 2 and 3 in headless Chromium 156 while its
// buffer held the text. So WebGL is used only on a hardware GPU, and any failure or context
// loss falls back to the DOM renderer (terminal.ts).

import type { IDisposable, Terminal } from '@xterm/xterm';

/**
 * Loads xterm's WebGL renderer into `term` (on demand: the DOM renderer works
 * without it, and it is the largest addon). `lost` runs when the GPU goes away
 * (driver reset, too many contexts): the DOM renderer takes over then. Null if
 * the pane was disposed meanwhile, 'failed' if it could not load.
 */
export async function loadWebglAddon(term: Terminal, lost: () => void, disposed: () => boolean): Promise<IDisposable | null | 'failed'> {
  try {
    const { WebglAddon } = await import('@xterm/addon-webgl');
    if (disposed()) return null;
    const addon = new WebglAddon();
    addon.onContextLoss(lost);
    term.loadAddon(addon);
    return addon;
  } catch {
    return 'failed';
  }
}

/** The renderer a pane starts with, and why (shown in `data-renderer-reason`). */
export interface RendererChoice {
  readonly renderer: 'webgl' | 'dom';
  readonly reason: string;
}

/** `localStorage['duet.renderer']` = `webgl` or `dom` overrides the choice (tests, bug reports). */
export const RENDERER_KEY = 'duet.renderer';

/** GPU names of software rasterisers, as WEBGL_debug_renderer_info reports them. */
const SOFTWARE = /swiftshader|llvmpipe|softpipe|software|basic render|mesa offscreen/i;

/** Whether a renderer string names a software rasteriser. */
export function isSoftwareRenderer(name: string): boolean {
  return SOFTWARE.test(name);
}

function override(): string | null {
  try {
    return localStorage.getItem(RENDERER_KEY);
  } catch {
    return null; // storage blocked (privacy mode): no override
  }
}

/** Decides once per pane; probing costs one throwaway WebGL2 context, freed at once. */
export function chooseRenderer(): RendererChoice {
  const forced = override();
  if (forced === 'dom' || forced === 'webgl') return { renderer: forced, reason: 'override' };
  let gl: WebGL2RenderingContext | null;
  try {
    gl = document.createElement('canvas').getContext('webgl2');
  } catch {
    gl = null; // a browser that throws instead of returning null
  }
  if (!gl) return { renderer: 'dom', reason: 'no-webgl2' };
  try {
    const info = gl.getExtension('WEBGL_debug_renderer_info');
    // Without the extension the GPU is unknown: the fallbacks still cover a failure.
    const name = info ? String(gl.getParameter(info.UNMASKED_RENDERER_WEBGL)) : '';
    return isSoftwareRenderer(name) ? { renderer: 'dom', reason: 'software-webgl' } : { renderer: 'webgl', reason: name === '' ? 'gpu-unknown' : 'gpu' };
  } finally {
    // Contexts are few (Chromium keeps 16): give this one back now.
    gl.getExtension('WEBGL_lose_context')?.loseContext();
  }
}
