from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from services.store.embedded import EmbeddedRedis
from tests.conftest import night_doc
from tests.support import LiveServer, start_server


@pytest.fixture
async def server(redis_server: EmbeddedRedis, org: str) -> AsyncIterator[LiveServer]:
    live = await start_server(redis_server.url, night_doc(org))
    yield live
    await live.stop()
