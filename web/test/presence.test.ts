// @vitest-environment jsdom
// The presence bar: who is connected, a client by its own label when it has
// one (`duet attach` says "terminal on HOST"), the principal in the tooltip.
import { describe, expect, it } from 'vitest';
import { PresenceBar } from '../src/ui/share';

describe('presence bar', () => {
  it('names a labelled client by its label and keeps the principal in the tooltip', () => {
    const bar = new PresenceBar('s1');
    bar.render(
      [
        { client_id: 1, name: 'owner', role: 'owner' },
        { client_id: 2, name: 'owner', role: 'owner', label: 'terminal on laptop' },
        { client_id: 3, name: 'share:ab12', role: 'viewer' },
      ],
      1,
      'owner',
      'owner',
    );
    const items = [...bar.root.querySelectorAll('.presence-item')];
    expect(items.map((i) => i.textContent)).toEqual(['owner (you, owner)', 'terminal on laptop (owner)', 'share:ab12 (viewer)']);
    expect(items[1]?.getAttribute('title')).toBe('terminal on laptop: owner (owner)');
    expect(items[1]?.getAttribute('data-label')).toBe('terminal on laptop');
  });
});
