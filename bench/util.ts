// Benchmark helpers: numbers and ratios against a baseline measured in the same run.
import { execFile } from 'node:child_process';

export function execJson(cmd: string, args: string[]): Promise<Record<string, number>[]> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`${cmd} ${args.join(' ')}: ${err.message} ${stderr}`));
      resolve(stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, number>));
    });
  });
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

export function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}

export function row(cells: (string | number)[], widths: number[]): string {
  return cells.map((c, i) => String(c).padEnd(widths[i] ?? 12)).join(' ');
}

export function print(title: string, header: string[], rows: (string | number)[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)) + 2);
  process.stdout.write(`\n== ${title}\n${row(header, widths)}\n`);
  for (const r of rows) process.stdout.write(row(r, widths) + '\n');
}
