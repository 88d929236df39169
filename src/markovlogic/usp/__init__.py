"""Unsupervised semantic parsing (USP) and ontology induction (OntoUSP) from
dependency trees: Poon's thesis, chapters 5 and 6.

* :mod:`.qlf` -- quasi-logical forms of a corpus as integer arrays;
* :mod:`.state` -- semantic parses, clusters, argument types and the USP
  MLN's closed-form log-likelihood with its priors; the exact change of the
  MERGE, COMPOSE and argument-type merge operators;
* :mod:`.learn` -- USP-Learn's agenda search;
* :mod:`.onto` -- OntoUSP: abstract clusters, ISA links, ABSTRACT and ADDCHILD,
  hierarchical smoothing;
* :mod:`.parse` -- USP-Parse, the MAP semantic parse of a new sentence;
* :mod:`.kb` -- the knowledge base and question answering;
* :mod:`.model` -- the learned model, its file and its printed clusters and ontology.
"""

from .api import learn, read_corpus
from .kb import Answer, AnswerOptions, KnowledgeBase, Question, QuestionError
from .learn import LearnStats, USPOptions, learn_usp
from .model import ModelError, Ontology, USPModel, ontology_text
from .onto import OntoOptions, learn_ontology
from .parse import Parser, SemanticParse, score_parse
from .qlf import QLFCorpus, Vocab, build_qlf
from .state import Priors, USPState

__all__ = ["Answer", "AnswerOptions", "KnowledgeBase", "LearnStats", "ModelError", "OntoOptions", "Ontology", "Parser", "Priors",
           "QLFCorpus", "Question", "QuestionError", "SemanticParse", "USPModel", "USPOptions", "USPState", "Vocab",
           "build_qlf", "learn", "learn_ontology", "learn_usp", "ontology_text", "read_corpus", "score_parse"]
