"""griptape's GriptapeCloudPromptDriver, unmodified, sending images in a chat message: the bytes of an
ImageArtifact and an ImageUrlArtifact reach the model as image_url parts (the scripted model names the parts it
got), streamed and not; a model that takes no images is a 400 the driver raises."""
from __future__ import annotations

import json

import pytest
import requests
from griptape.artifacts import ImageArtifact, ImageUrlArtifact, TextArtifact
from griptape.common import ImageMessageContent, Message, PromptStack, TextMessageContent
from griptape.drivers.prompt.griptape_cloud import GriptapeCloudPromptDriver

from support import API_KEY, BASE_URL, MODEL


def question_with_images() -> PromptStack:
    image = ImageArtifact(b"\x89PNG\r\n\x1a\nnot really a picture", format="png", width=1, height=1)
    # A documentation address: the platform passes it on (never fetches it), and the scripted model fetches nothing.
    url = ImageUrlArtifact("https://203.0.113.7/cat.png")
    content = [TextMessageContent(TextArtifact("What is in these?")), ImageMessageContent(image), ImageMessageContent(url)]
    return PromptStack(messages=[Message(content=content, role=Message.USER_ROLE)])


@pytest.mark.parametrize("stream", [False, True])
def test_images_through_griptape_cloud_prompt_driver(stream):
    driver = GriptapeCloudPromptDriver(model=MODEL, base_url=BASE_URL, api_key=API_KEY, stream=stream, max_attempts=1)
    seen = json.loads(driver.run(question_with_images()).value)
    assert seen["input"] == "What is in these?"
    assert seen["parts"] == ["text", "image_url", "image_url"]


def test_image_for_a_text_only_model_is_refused():
    driver = GriptapeCloudPromptDriver(model="local/text-only", base_url=BASE_URL, api_key=API_KEY, max_attempts=1)
    with pytest.raises(requests.HTTPError) as refused:
        driver.run(question_with_images())
    assert refused.value.response.status_code == 400
    errors = refused.value.response.json()["errors"]
    assert 'Model "local/text-only" does not take image input (ImageMessageContent)' in errors[0]["message"]
