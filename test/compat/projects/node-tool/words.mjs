// A Node.js tool: its methods are activities, described by their `description` and `schema` properties.
class NodeWordTool {
  reverse_words({ text }) {
    return text.split(' ').reverse().join(' ');
  }
}
NodeWordTool.prototype.reverse_words.description = 'Reverses the order of the words of a text.';
NodeWordTool.prototype.reverse_words.schema = {
  type: 'object',
  properties: { text: { type: 'string', description: 'The text' } },
  required: ['text'],
};

export const init_tool = () => new NodeWordTool();
