/**
 * The hub's reason for refusing a field, next to that field; without `field`, what no field
 * claims (the problem's `detail`), so nothing the hub said goes unshown.
 */
import type { ApiError } from '../api/hub-api.ts';

export function FieldError({
  error,
  field,
  fields = [],
  exact = false,
}: {
  error: ApiError | undefined;
  field?: string;
  /** With no `field`: the fields shown elsewhere, whose issues are not repeated here. */
  fields?: readonly string[];
  /** Only the issue about `field` itself, not those about fields inside it. */
  exact?: boolean;
}) {
  if (!error) return null;
  if (field !== undefined) {
    const reason = error.reasonFor(field, exact);
    return reason ? (
      <p class="field-error" role="alert" data-field={field}>
        {reason}
      </p>
    ) : null;
  }
  const shown = (f: string) =>
    fields.some((name) => f === name || f.startsWith(`${name}[`) || f.startsWith(`${name}.`));
  const rest = error.issues.filter((i) => !shown(i.field));
  if (error.issues.length > 0 && rest.length === 0) return null;
  return (
    <p class="field-error" role="alert">
      {rest.length > 0 ? rest.map((i) => `${i.field}: ${i.reason}`).join('; ') : error.detail}
    </p>
  );
}
