// A new password typed twice (the set-password and accept-invite pages): the API's minimum is hinted and checked
// by the browser; the API checks it again and its message is shown by the page.
import { Fragment } from 'react';

export const PASSWORD_MIN_LENGTH = 12;

export function NewPasswordFields(props: {
  labels: [string, string];
  password: string;
  again: string;
  onPassword: (value: string) => void;
  onAgain: (value: string) => void;
}) {
  const fields = [
    { id: 'new-password', label: props.labels[0], value: props.password, set: props.onPassword },
    { id: 'new-password-again', label: props.labels[1], value: props.again, set: props.onAgain },
  ];
  return (
    <>
      {fields.map((f) => (
        <Fragment key={f.id}>
          <label htmlFor={f.id}>{f.label}</label>
          <input
            id={f.id}
            type="password"
            autoComplete="new-password"
            minLength={PASSWORD_MIN_LENGTH}
            value={f.value}
            onChange={(e) => f.set(e.target.value)}
            required
          />
        </Fragment>
      ))}
    </>
  );
}
