// A resource's schedules (docs/run-control.md#schedules): each with its expression, time zone, overlap policy and
// next fire times as Temporal computes them; pause, resume, run now, delete; and a form that adds one
// (a structure's args, one a line; a function's event body as JSON; an assistant's input).
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import {
  createSchedule,
  listSchedules,
  scheduleAction,
  type ScheduledKind,
  type ScheduleRequest,
} from '../api/run-control';
import { queryKeys } from '../api/query-keys';
import { ErrorBox, Section, Time } from '../ui';
import { parseJson } from './json-input';
import { Writes } from '../role';

const OVERLAP = ['skip', 'buffer_one', 'allow_all', 'cancel_other'] as const;
const PAYLOAD_LABEL = { structure: 'Arguments, one a line', function: 'Event body (JSON)', assistant: 'Input' };

export function Schedules({ kind, resourceId }: { kind: ScheduledKind; resourceId: string }) {
  const queries = useQueryClient();
  const key = queryKeys.schedules(kind, resourceId);
  const schedules = useQuery({ queryKey: key, queryFn: () => listSchedules(kind, resourceId) });
  const refresh = () => void queries.invalidateQueries({ queryKey: key });
  const act = useMutation({
    mutationFn: (a: { scheduleId: string; action: 'pause' | 'resume' | 'trigger' | 'delete' }) =>
      scheduleAction(kind, resourceId, a.scheduleId, a.action),
    onSettled: refresh,
  });
  const [expression, setExpression] = useState('');
  const [timeZone, setTimeZone] = useState('UTC');
  const [overlap, setOverlap] = useState<(typeof OVERLAP)[number]>('skip');
  const [payload, setPayload] = useState('');
  const [formError, setFormError] = useState<string>();
  const create = useMutation({
    mutationFn: (body: ScheduleRequest) => createSchedule(kind, resourceId, body),
    onSuccess: () => {
      setExpression('');
      setPayload('');
    },
    onSettled: refresh,
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const body: ScheduleRequest = { schedule_expression: expression, time_zone: timeZone, overlap_policy: overlap };
    if (kind === 'function') {
      const parsed = parseJson(payload);
      if (parsed.error) return setFormError(parsed.error);
      body.input = parsed.value as ScheduleRequest['input'];
    } else if (kind === 'assistant') body.input = payload;
    else body.args = payload.split('\n').filter((line) => line !== '');
    setFormError(undefined);
    create.mutate(body);
  };

  return (
    <Section title="Schedules">
      <ErrorBox error={schedules.error ?? act.error} />
      {schedules.data && schedules.data.length === 0 && <p className="muted">No schedule.</p>}
      {!!schedules.data?.length && (
        <table className="list" aria-label="Schedules">
          <thead>
            <tr>
              <th>When</th>
              <th>Overlap</th>
              <th>Next fires</th>
              <th>State</th>
              <th aria-label="Actions" />
            </tr>
          </thead>
          <tbody>
            {schedules.data.map((s) => (
              <tr key={s.schedule_id}>
                <td className="mono">
                  {s.schedule_expression} <span className="muted">({s.time_zone})</span>
                </td>
                <td>{s.overlap_policy}</td>
                <td>
                  {s.next_fire_times === null ? (
                    <span className="muted" title="Temporal did not describe the schedule in time">
                      unknown
                    </span>
                  ) : s.next_fire_times.length ? (
                    <Time at={s.next_fire_times[0]} />
                  ) : (
                    '—'
                  )}
                </td>
                <td>{s.enabled ? 'Active' : 'Paused'}</td>
                <td className="actions">
                  <Writes>
                    {(['trigger', s.enabled ? 'pause' : 'resume', 'delete'] as const).map((action) => (
                      <button
                        key={action}
                        type="button"
                        disabled={act.isPending}
                        onClick={() => act.mutate({ scheduleId: s.schedule_id, action })}
                      >
                        {{ trigger: 'Run now', pause: 'Pause', resume: 'Resume', delete: 'Delete' }[action]}
                      </button>
                    ))}
                  </Writes>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Writes>
        <h3>New schedule</h3>
        <form onSubmit={submit} className="run-form" aria-label="New schedule">
          <label htmlFor="schedule-expression">When (cron or rate)</label>
          <input
            id="schedule-expression"
            placeholder="*/15 * * * *  or  rate(1 hour)"
            value={expression}
            onChange={(e) => setExpression(e.target.value)}
          />
          <label htmlFor="schedule-time-zone">Time zone</label>
          <input id="schedule-time-zone" value={timeZone} onChange={(e) => setTimeZone(e.target.value)} />
          <label htmlFor="schedule-overlap">While the last run is open</label>
          <select
            id="schedule-overlap"
            value={overlap}
            onChange={(e) => setOverlap(e.target.value as (typeof OVERLAP)[number])}
          >
            {OVERLAP.map((o) => (
              <option key={o}>{o}</option>
            ))}
          </select>
          <label htmlFor="schedule-payload">{PAYLOAD_LABEL[kind]}</label>
          <textarea id="schedule-payload" rows={2} value={payload} onChange={(e) => setPayload(e.target.value)} />
          <button type="submit" disabled={!expression || create.isPending}>
            Add schedule
          </button>
        </form>
        <ErrorBox error={formError ?? create.error} />
      </Writes>
    </Section>
  );
}
