/**
 * `Server-Timing` (W3C Server Timing): where a response's time went, readable in any browser's
 * developer tools. One formatter for every Rampart app (the demo's WAF and app stages, the
 * hub's handler, prexy's proxy stages), so the figures read the same everywhere: durations in
 * milliseconds with three decimals, descriptions quoted.
 */

/** One metric of the header: `name;dur=1.234;desc="..."`. */
export interface TimingMetric {
  readonly name: string;
  /** Milliseconds; omitted when the metric only describes (`waf;desc="off"`). */
  readonly dur?: number;
  readonly desc?: string;
}

/**
 * A duration in ms with three decimals, as `value.toFixed(3)` writes it for durations (0 up to
 * about 9e12). Written out because headers are built on every request: `toFixed` cost about
 * 0.25 us a call in the demo's profile under load, this an integer division and two
 * small-integer strings.
 */
export function ms(value: number): string {
  const thousandths = Math.round(value * 1000);
  const whole = Math.floor(thousandths / 1000);
  const fraction = thousandths - whole * 1000;
  return `${whole}.${fraction < 10 ? '00' : fraction < 100 ? '0' : ''}${fraction}`;
}

/** The header value for `metrics`, in order. */
export function serverTiming(metrics: readonly TimingMetric[]): string {
  let header = '';
  for (const metric of metrics) {
    if (header !== '') header += ', ';
    header += metric.name;
    if (metric.dur !== undefined) header += `;dur=${ms(metric.dur)}`;
    if (metric.desc !== undefined) header += `;desc=${quote(metric.desc)}`;
  }
  return header;
}

/** A quoted-string (RFC 9110 5.6.4): `"` and `\` escaped. */
function quote(text: string): string {
  return `"${text.replace(/["\\]/g, (c) => `\\${c}`)}"`;
}
