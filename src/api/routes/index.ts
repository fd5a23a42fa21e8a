// Importing a module declares its routes. One module per resource area.
import './accounts';
import './buckets';
import './invites';
import './platform';
import './secrets';
