// One structure: its deployments with their status and build log (re-read while one is open), a button that deploys again,
// a form that starts a run (one argument a line) and opens it, its concurrency queue and schedules, and its runs
// (the Runs page, filtered).
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate, useParams } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { queryKeys } from '../api/query-keys';
import { deployStructure, getStructure, listStructureDeployments, startStructureRun } from '../api/structures';
import { DeploymentsTable } from '../components/deployments';
import { Queue } from '../components/queue';
import { Schedules } from '../components/schedules';
import { ErrorBox, Section } from '../ui';
import { Writes } from '../role';

const OPEN_POLL_MS = 1500;
const isOpen = (status: string) => status === 'QUEUED' || status === 'DEPLOYING';

export function StructurePage() {
  const { structureId } = useParams({ from: '/structures/$structureId' });
  const queries = useQueryClient();
  const navigate = useNavigate();
  const structure = useQuery({
    queryKey: queryKeys.structure(structureId),
    queryFn: () => getStructure(structureId),
  });
  const deployments = useQuery({
    queryKey: queryKeys.structureDeployments(structureId),
    queryFn: () => listStructureDeployments(structureId),
    refetchInterval: (q) => (q.state.data?.deployments.some((d) => isOpen(d.status)) ? OPEN_POLL_MS : false),
  });
  const deploy = useMutation({
    mutationFn: () => deployStructure(structureId),
    onSettled: () => queries.invalidateQueries({ queryKey: queryKeys.structureDeployments(structureId) }),
  });
  const [args, setArgs] = useState('');
  const start = useMutation({
    mutationFn: () =>
      startStructureRun(
        structureId,
        args.split('\n').filter((line) => line !== ''),
      ),
    onSuccess: (run) =>
      navigate({ to: '/runs/$kind/$runId', params: { kind: 'structure', runId: run.structure_run_id } }),
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    start.mutate();
  };
  const deployed = deployments.data?.deployments.some((d) => d.status === 'SUCCEEDED');

  return (
    <>
      <header className="page-header">
        <h1>{structure.data?.name ?? 'Structure'}</h1>
        <Link to="/runs" search={{ resource_id: structureId }}>
          Its runs
        </Link>
      </header>
      <ErrorBox error={structure.error} />
      <Section
        title="Deployments"
        actions={
          <Writes>
            <button type="button" onClick={() => deploy.mutate()} disabled={deploy.isPending}>
              Deploy again
            </button>
          </Writes>
        }
      >
        <ErrorBox error={deployments.error ?? deploy.error} />
        <DeploymentsTable deployments={deployments.data?.deployments} />
      </Section>
      <Writes>
        <Section title="Start a run">
          <form onSubmit={submit} className="run-form">
            <label htmlFor="run-args">Arguments, one a line</label>
            <textarea id="run-args" rows={3} value={args} onChange={(e) => setArgs(e.target.value)} />
            <button type="submit" disabled={!deployed || start.isPending}>
              Start run
            </button>
            {!deployed && <p className="muted">A run needs a successful deployment.</p>}
          </form>
          <ErrorBox error={start.error} />
        </Section>
      </Writes>
      <Queue kind="structure" resourceId={structureId} />
      <Schedules kind="structure" resourceId={structureId} />
    </>
  );
}
