"""The answer path as named skills: one module per question type, each with the same small
interface (fedlab.skills.base.Skill: applies to a question frame, needs some passages, answers
with citations), their order fixed by fedlab.skills.registry; the sentence reader
(fedlab.skills.reader) answers when none does. One docs page per skill: docs/skills/.
"""
