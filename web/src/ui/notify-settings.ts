// The top bar's notification control: asks for permission (a click is
// needed for that), turns notifications off again on this device (a page
// cannot take the permission back: duet keeps its own switch), sets after
// how long a finished turn is worth a notification, turns Web Push on or
// off for this device, and mutes the open session on it. Approvals and
// exits notify while notifications are on.
import { Notifier, notificationsOff, setNotificationsOff, setTurnSeconds, turnSeconds } from '../notify/notifier';
import { PushControl } from '../notify/push';
import { h, svgIcon } from './dom';

function stateText(): string {
  if (!Notifier.supported) return 'This browser cannot show notifications here (it needs https, or localhost).';
  switch (Notification.permission) {
    case 'granted':
      return notificationsOff() ? 'Off on this device.' : 'On: approvals, long turns and exits notify you while this tab is hidden.';
    case 'denied':
      return 'Blocked in the browser’s site settings.';
    default:
      return 'Off.';
  }
}

/** A bell drawn inline (an emoji renders as a box where no emoji font is installed). */
function bellIcon(): SVGSVGElement {
  return svgIcon(
    ['M6 8a6 6 0 0 1 12 0c0 7 3 9 3 9H3s3-2 3-9', 'M10.3 21a1.94 1.94 0 0 0 3.4 0'],
    { viewBox: '0 0 24 24', width: '18', height: '18', fill: 'none', stroke: 'currentColor', 'stroke-width': '2', 'stroke-linecap': 'round', 'stroke-linejoin': 'round', class: 'icon-bell' },
  );
}

/**
 * The control: a button that opens a small panel. `push` is this device's
 * Web Push; `session` the open session's id, if any (for muting it).
 */
export function notifySettings(push: PushControl, session: () => string | undefined): HTMLElement {
  const status = h('p', { class: 'notify-status', role: 'status' }, stateText());
  /** The one switch: on asks the browser first (once), off is this device's own. */
  const canSwitch = (): boolean => Notifier.supported && Notification.permission !== 'denied';
  const isOn = (): boolean => Notifier.supported && Notification.permission === 'granted' && !notificationsOff();
  const enable = h('button', {
    type: 'button',
    class: 'btn notify-enable',
    onclick: () => {
      if (isOn()) {
        setNotificationsOff(true);
        sync();
        return;
      }
      setNotificationsOff(false);
      if (Notification.permission === 'granted') sync();
      else void Notification.requestPermission().then(sync);
    },
  });
  const sync = (): void => {
    status.textContent = stateText();
    enable.hidden = !canSwitch();
    const on = isOn();
    enable.textContent = on ? 'Turn off notifications' : 'Turn on notifications';
    enable.classList.toggle('btn-primary', !on);
  };
  const seconds = h('input', {
    type: 'number',
    min: 1,
    step: 1,
    class: 'notify-seconds',
    value: turnSeconds(),
    'aria-label': 'Notify when a turn finishes after more than (seconds)',
    onchange: () => { const v = Number(seconds.value); if (v > 0) setTurnSeconds(v); },
  });

  const pushStatus = h('p', { class: 'notify-status push-status', role: 'status' });
  const pushBox = h('input', { type: 'checkbox', class: 'push-enable', disabled: !PushControl.supported });
  const muteBox = h('input', { type: 'checkbox', class: 'push-mute' });
  const muteRow = h('label', { class: 'notify-check push-mute-row', hidden: true }, muteBox, h('span', {}, 'Mute this session on this device'));
  /** Shows push as it is: on or off here, and the open session's mute. */
  const refresh = async (): Promise<void> => {
    if (!PushControl.supported) {
      pushStatus.textContent = 'This browser cannot receive push here (it needs https, or localhost).';
      return;
    }
    const on = (await push.current()) !== null;
    pushBox.checked = on;
    const id = session();
    const muted = on && id !== undefined ? await push.muted(id).catch(() => null) : null;
    muteRow.hidden = muted === null;
    muteBox.checked = muted === true;
  };
  /** A change is under way (the panel's refresh must not undo the user's tick meanwhile). */
  let busy = false;
  const act = (what: () => Promise<void>, done: string): void => {
    busy = true;
    pushBox.disabled = muteBox.disabled = true;
    pushStatus.textContent = 'Working…';
    void what()
      .then(() => { pushStatus.textContent = done; })
      .catch((err: unknown) => { pushStatus.textContent = err instanceof Error ? err.message : String(err); })
      .then(() => refresh())
      .finally(() => {
        busy = false;
        pushBox.disabled = !PushControl.supported;
        muteBox.disabled = false;
        sync();
      });
  };
  pushBox.addEventListener('change', () => {
    if (pushBox.checked) act(() => push.enable(), 'Push is on: this device hears of approvals, long turns and exits, also with duet closed.');
    else act(() => push.disable(), 'Push is off on this device.');
  });
  muteBox.addEventListener('change', () => {
    const id = session();
    if (id === undefined) return;
    const muted = muteBox.checked;
    act(() => push.setMuted(id, muted), muted ? 'This session is muted on this device.' : 'This session notifies this device again.');
  });

  const panel = h('div', { class: 'notify-panel', hidden: true, role: 'dialog', 'aria-label': 'Notifications' },
    status,
    enable,
    h('label', { class: 'notify-row' }, 'Notify when a turn finishes after more than ', seconds, ' s'),
    // The box beside its words, never above them (a long text wrapped under it as a flex item).
    h('label', { class: 'notify-check' }, pushBox, h('span', {}, 'Push to this device (also with duet closed)')),
    muteRow,
    pushStatus,
  );
  const button = h('button', {
    type: 'button',
    class: 'btn btn-icon notify-toggle',
    'aria-label': 'Notifications',
    'aria-expanded': 'false',
    onclick: () => {
      panel.hidden = !panel.hidden;
      button.setAttribute('aria-expanded', String(!panel.hidden));
      sync();
      if (!panel.hidden && !busy) void refresh().catch(() => undefined);
    },
  }, bellIcon());
  // Escape (on the bell or in the panel) closes the panel, as a dialog does;
  // the keyboard goes back to the bell.
  sync();
  const control = h('div', { class: 'notify-control' }, button, panel);
  control.addEventListener('keydown', (ev) => {
    if (ev.key !== 'Escape' || panel.hidden) return;
    ev.preventDefault();
    panel.hidden = true;
    button.setAttribute('aria-expanded', 'false');
    button.focus();
  });
  return control;
}
