"""Synthetic question generation (``plan`` → ``prompts`` → ``parse`` → ``filters``,
run by ``generate``) from a chunk collection, with filters and reasons.

The flow, each step a small function over plain data:

1. **sample** chunks stratified over documents (every document gets its turn before
   any document gets a second chunk, so a long manual does not crowd out short notes);
2. **plan** one task per question, cycling over the requested question types; tasks
   that need a second chunk take a *related* one (nearest by embedding, from another
   document when there is one): a partner for ``multi_hop`` / ``comparison``, the
   near-miss for ``distracting``;
3. **prompt** an LLM (any OpenAI-compatible endpoint, through the project's client
   with its cache, limiter and retries) with passages labelled ``C1``, ``C2``, optional
   few-shot examples from a golden set, and the reply schema;
4. **parse** each reply to a status (``ok``, ``repaired``, ``parse_error``,
   ``truncated``, ``refused``, ``provider_error``, ``timeout``, ``cancelled``), then
   **check** it: a cited chunk label that was not given, a multi-hop question citing one
   chunk, or a distracting question citing the near-miss drops the row with that reason;
5. **filter** near-duplicate questions (cosine of MiniLM embeddings, also against the
   few-shot examples so they are not copied) and questions their reference chunks do not
   answer (a judge checks that the reference answer is supported by the chunks).

Nothing is lost: every task ends either as a kept row (``provenance: synthetic``,
until a reviewer marks it reviewed) or as a :class:`DroppedRow` with stage and reason.
"""

from rag_eval.synth.filters import drop_near_duplicates
from rag_eval.synth.generate import make_answer_judge, synthesize, synthesize_from_collection
from rag_eval.synth.plan import SynthOptions

__all__ = ["SynthOptions", "drop_near_duplicates", "make_answer_judge", "synthesize", "synthesize_from_collection"]
