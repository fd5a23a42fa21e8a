// One function or tool: its deployments with status and build log (re-read while one is open), a button that
// deploys again, a tool's MCP server and the tools it listed, a form that tries it (a function's execute, a tool's activities), and its latest runs.
// Both have a concurrency queue; functions have schedules (tools do not: docs/run-control.md).
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useParams } from '@tanstack/react-router';
import { deployAgain, getResource, isOpenDeployment, listDeployments, type CodeKind } from '../api/code-resources';
import { queryKeys } from '../api/query-keys';
import { DeploymentsTable } from '../components/deployments';
import { McpServerTools } from '../components/mcp-tool';
import { FunctionExecute } from '../components/function-execute';
import { Queue } from '../components/queue';
import { Schedules } from '../components/schedules';
import { RecentRuns } from '../components/recent-runs';
import { ToolActivity } from '../components/tool-activity';
import { ErrorBox, Section } from '../ui';
import { PLURAL } from './code-resources';
import { Writes } from '../role';

const OPEN_POLL_MS = 1500;

export function CodeResourcePage({ kind }: { kind: CodeKind }) {
  const { resourceId } = useParams({ strict: false }) as { resourceId: string };
  const queries = useQueryClient();
  const resource = useQuery({
    queryKey: queryKeys.codeResource(kind, resourceId),
    queryFn: () => getResource(kind, resourceId),
  });
  const deployments = useQuery({
    queryKey: queryKeys.codeDeployments(kind, resourceId),
    queryFn: () => listDeployments(kind, resourceId),
    refetchInterval: (q) => (q.state.data?.some((d) => isOpenDeployment(d.status)) ? OPEN_POLL_MS : false),
  });
  const deploy = useMutation({
    mutationFn: () => deployAgain(kind, resourceId),
    onSettled: () => queries.invalidateQueries({ queryKey: queryKeys.codeDeployments(kind, resourceId) }),
  });
  const deployed = !!deployments.data?.some((d) => d.status === 'SUCCEEDED');
  const onRan = () => void queries.invalidateQueries({ queryKey: queryKeys.runs.all });

  return (
    <>
      <header className="page-header">
        <h1>{resource.data?.name ?? kind}</h1>
        <Link to={kind === 'function' ? '/functions' : '/tools'}>All {PLURAL[kind].toLowerCase()}</Link>
      </header>
      {resource.data?.description && <p className="muted">{resource.data.description}</p>}
      <ErrorBox error={resource.error} />
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
        <DeploymentsTable deployments={deployments.data} />
      </Section>
      {resource.data?.mcpUrl && <McpServerTools url={resource.data.mcpUrl} deployments={deployments.data} />}
      <Writes>
        {kind === 'function' ? (
          <FunctionExecute functionId={resourceId} deployed={deployed} onRan={onRan} />
        ) : (
          <ToolActivity toolId={resourceId} deployed={deployed} onRan={onRan} />
        )}
      </Writes>
      <Queue kind={kind} resourceId={resourceId} />
      {kind === 'function' && <Schedules kind="function" resourceId={resourceId} />}
      <RecentRuns kind={kind} resourceId={resourceId} />
    </>
  );
}
