"""Text input: CoNLL-U dependency trees (:mod:`.conllu`), read with errors
that name the file and line. Coreference evidence (``mln derive --conllu``)
and unsupervised semantic parsing (:mod:`markovlogic.usp`) build on it."""

from .conllu import Sentence, TextError, Token, read_conllu, read_conllu_files, read_conllu_lines

__all__ = ["Sentence", "TextError", "Token", "read_conllu", "read_conllu_files", "read_conllu_lines"]
