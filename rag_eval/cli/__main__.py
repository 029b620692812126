"""``python -m rag_eval.cli``: the same entry point as the ``rag-eval`` script."""

from rag_eval.cli import cli

if __name__ == "__main__":
    cli(prog_name="rag-eval")
