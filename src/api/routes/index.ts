// Importing a module declares its routes. One module per resource area.
import './accounts';
import './assistant-runs';
import './assistants';
import './buckets';
import './chat';
import './code-resources';
import './dashboard';
import './deployments';
import './events';
import './function-runs';
import './invites';
import './platform';
import './rulesets';
import './runs';
import './secrets';
import './threads';
import './tool-runs';
