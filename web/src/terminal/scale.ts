// A terminal drawn at another window's size, shrunk to show whole in its
// pane: a follower that chose "Scale" (terminal.ts), and the replay, whose
// recording has the size it had. CSS transforms leave the layout box (and
// xterm's own measurements, made from offset sizes) as they are, so the
// terminal keeps its cells; only what is drawn shrinks.

/** Width and height in CSS pixels. */
export interface Box {
  readonly width: number;
  readonly height: number;
}

/** The scale that shows `content` whole in `room`: 1 when it fits, never more. */
export function fitScale(content: Box, room: Box): number {
  if (content.width <= 0 || content.height <= 0 || room.width <= 0 || room.height <= 0) return 1;
  return Math.min(1, room.width / content.width, room.height / content.height);
}

/** The room inside `el`'s padding. */
export function innerBox(el: HTMLElement): Box {
  const cs = getComputedStyle(el);
  const px = (v: string): number => Number.parseFloat(v) || 0;
  return {
    width: el.clientWidth - px(cs.paddingLeft) - px(cs.paddingRight),
    height: el.clientHeight - px(cs.paddingTop) - px(cs.paddingBottom),
  };
}

/** Shrinks `el` (from its top left corner) by `scale`; 1 undoes it. */
export function applyScale(el: HTMLElement, scale: number): void {
  if (scale >= 0.999) {
    el.style.removeProperty('transform');
    el.style.removeProperty('transform-origin');
    delete el.dataset.scale;
    return;
  }
  // Applied at every fit: unchanged, left alone (a same-value write restyles it).
  const transform = `scale(${scale.toFixed(4)})`;
  if (el.style.transform === transform) return;
  el.style.transform = transform;
  el.style.transformOrigin = '0 0';
  el.dataset.scale = scale.toFixed(3);
}
