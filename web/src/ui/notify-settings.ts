// The top bar's notification control: asks for permission (a click is
// needed for that) and sets after how long a finished turn is worth a
// notification. Approvals and exits always notify once permission is given.
import { Notifier, setTurnSeconds, turnSeconds } from '../notify/notifier';
import { h } from './dom';

function stateText(): string {
  if (!Notifier.supported) return 'This browser cannot show notifications here (it needs https, or localhost).';
  switch (Notification.permission) {
    case 'granted':
      return 'On: approvals, long turns and exits notify you while this tab is hidden.';
    case 'denied':
      return 'Blocked in the browser’s site settings.';
    default:
      return 'Off.';
  }
}

/** The control: a button that opens a small panel. */
export function notifySettings(): HTMLElement {
  const status = h('p', { class: 'notify-status', role: 'status' }, stateText());
  const enable = h('button', {
    type: 'button',
    class: 'btn btn-primary notify-enable',
    hidden: !Notifier.supported || Notification.permission !== 'default',
    onclick: () => {
      void Notification.requestPermission().then(() => {
        status.textContent = stateText();
        enable.hidden = Notification.permission !== 'default';
      });
    },
  }, 'Turn on notifications');
  const seconds = h('input', {
    type: 'number',
    min: 1,
    step: 1,
    class: 'notify-seconds',
    value: turnSeconds(),
    'aria-label': 'Notify when a turn took longer than (seconds)',
    onchange: () => { const v = Number(seconds.value); if (v > 0) setTurnSeconds(v); },
  });
  const panel = h('div', { class: 'notify-panel', hidden: true, role: 'dialog', 'aria-label': 'Notifications' },
    status,
    enable,
    h('label', { class: 'notify-row' }, 'A turn finished after more than ', seconds, ' s'),
  );
  const button = h('button', {
    type: 'button',
    class: 'btn btn-icon notify-toggle',
    'aria-label': 'Notifications',
    'aria-expanded': 'false',
    onclick: () => {
      panel.hidden = !panel.hidden;
      button.setAttribute('aria-expanded', String(!panel.hidden));
      status.textContent = stateText();
    },
  }, '🔔');
  return h('div', { class: 'notify-control' }, button, panel);
}
