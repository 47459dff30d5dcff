"""The Context API of LlamaIndex 0.12 (``ctx.get/set``, ``clear``, ``session``) beside the
later ``ctx.store`` spelling: one store, both ways."""

import pytest

from agentkit.core.sim import run_sync
from agentkit.workflow import Context, StartEvent, StopEvent, Workflow, step


class Counter(Workflow):
    @step
    async def count(self, ctx: Context, ev: StartEvent) -> StopEvent:
        await ctx.set("n", await ctx.get("n", default=0) + 1)
        return StopEvent(result=await ctx.store.get("n"))


def _ctx() -> Context:
    return Context(Counter())


def test_ctx_set_is_read_by_ctx_store_get():
    async def main():
        ctx = _ctx()
        await ctx.set("k", 1)
        return await ctx.store.get("k")

    assert run_sync(main()) == 1


def test_ctx_store_set_is_read_by_ctx_get():
    async def main():
        ctx = _ctx()
        await ctx.store.set("k", 2)
        return await ctx.get("k")

    assert run_sync(main()) == 2


def test_ctx_get_returns_the_default_for_a_missing_key():
    assert run_sync(_ctx().get("missing", default=None)) is None


def test_ctx_get_without_a_default_for_a_missing_key_is_a_value_error():
    with pytest.raises(ValueError, match=r"^Key 'missing' not found in the context store"):
        run_sync(_ctx().get("missing"))


def test_make_private_is_ignored_with_a_deprecation_warning_as_upstream():
    async def main():
        ctx = _ctx()
        with pytest.warns(DeprecationWarning, match="`make_private` is deprecated"):
            await ctx.set("k", 3, make_private=True)
        return await ctx.get("k")

    assert run_sync(main()) == 3


def test_clear_forgets_everything_in_the_store():
    async def main():
        ctx = _ctx()
        await ctx.set("a", 1)
        await ctx.store.set("b", 2)
        ctx.clear()
        return await ctx.get("a", default=None), await ctx.store.get("b", default=None)

    assert run_sync(main()) == (None, None)


def test_session_is_the_context_itself_with_a_deprecation_warning():
    ctx = _ctx()
    with pytest.warns(DeprecationWarning, match="`session` is deprecated"):
        assert ctx.session is ctx


def test_steps_keep_state_with_ctx_get_and_set_across_runs_of_one_context():
    async def main():
        workflow = Counter()
        ctx = Context(workflow)
        await workflow.run(ctx=ctx)
        return await workflow.run(ctx=ctx)

    assert run_sync(main()) == 2
