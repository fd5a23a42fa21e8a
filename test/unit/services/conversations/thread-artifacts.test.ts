// Thread messages as griptape's conversation memory writes them (artifact JSON) and the text an assistant's
// prompt reads from them.
import { expect } from 'chai';
import { messageText, textArtifactJson } from '../../../../src/services/conversations/thread-artifacts';

describe('thread messages as griptape artifacts', () => {
  it("writes a TextArtifact's JSON in the shape of griptape's to_json(), read back as its text", () => {
    const stored = JSON.parse(textArtifactJson('Bonjour !'));
    expect(Object.keys(stored)).to.deep.equal(['type', 'id', 'reference', 'meta', 'name', 'value']);
    expect(stored).to.include({ type: 'TextArtifact', reference: null, value: 'Bonjour !' });
    expect(stored.id)
      .to.match(/^[0-9a-f]{32}$/)
      .and.equal(stored.name);
    expect(messageText(textArtifactJson('Bonjour !'))).to.equal('Bonjour !');
  });

  it('reads the text of any text-like artifact and of a list of them; other strings stay as they are', () => {
    const griptape =
      '{"type": "TextArtifact", "id": "31bc", "reference": null, "meta": {}, "name": "31bc", "value": "first question"}';
    expect(messageText(griptape)).to.equal('first question');
    expect(messageText('{"type": "JsonArtifact", "value": "{\\"a\\": 1}"}')).to.equal('{"a": 1}');
    const list = {
      type: 'ListArtifact',
      value: [
        { type: 'TextArtifact', value: 'a' },
        { type: 'TextArtifact', value: 'b' },
      ],
    };
    expect(messageText(JSON.stringify(list))).to.equal('a\nb');
    for (const plain of [
      'Hello',
      '{not json',
      '{"type": "Note", "value": "x"}',
      '{"a": 1}',
      '{"type": "BlobArtifact", "value": 3}',
    ])
      expect(messageText(plain), plain).to.equal(plain);
  });
});
