// Chromium's processes as Linux sees them: the browser this script
// launched (a child of this Node process) and its renderers, with their
// memory from /proc.
import { readdirSync, readFileSync } from 'node:fs';

function read(path) {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null; // the process has gone
  }
}

/** pid → {ppid, cmdline} for every process we may read. */
function processes() {
  const out = new Map();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    const stat = read(`/proc/${d}/stat`);
    const cmd = read(`/proc/${d}/cmdline`);
    if (stat === null || cmd === null) continue;
    // The command name is in parentheses and may hold spaces: the ppid follows the last ')'.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    out.set(Number(d), { ppid, cmdline: cmd.split('\0') });
  }
  return out;
}

/**
 * The renderer processes of the Chromium(s) this Node process started (not
 * the browser's own WebUI renderer). Chromium rewrites its command line
 * into one space-separated string, so flags are matched in that.
 */
export function renderers() {
  const all = processes();
  const mine = new Set([process.pid]);
  // Parents come before children often but not always: iterate to a fixed point.
  for (let grew = true; grew;) {
    grew = false;
    for (const [pid, p] of all) {
      if (!mine.has(pid) && mine.has(p.ppid)) {
        mine.add(pid);
        grew = true;
      }
    }
  }
  return [...mine].filter((pid) => {
    const cmd = all.get(pid)?.cmdline.join(' ') ?? '';
    return cmd.includes(' --type=renderer') && !cmd.includes('--top-chrome-webui') && !cmd.includes('--extension-process');
  });
}

/**
 * kB figures of one process: RSS and its parts (status: anonymous, file
 * mappings — Chromium's own code, shared by all its processes — and shared
 * memory), PSS and private pages (smaps_rollup).
 */
export function memory(pid) {
  const status = read(`/proc/${pid}/status`) ?? '';
  const rollup = read(`/proc/${pid}/smaps_rollup`) ?? '';
  const kb = (text, key) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN);
  return {
    rssKb: kb(status, 'VmRSS'),
    hwmKb: kb(status, 'VmHWM'),
    anonKb: kb(status, 'RssAnon'),
    fileKb: kb(status, 'RssFile'),
    shmemKb: kb(status, 'RssShmem'),
    pssKb: kb(rollup, 'Pss'),
    privateKb: kb(rollup, 'Private_Clean') + kb(rollup, 'Private_Dirty'),
  };
}
