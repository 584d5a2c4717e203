"""A person's answer to a prompt named by its id (the API's seeds 002 and 003): the rules that check it
against the prompt and turn it into the core's answer, vote, cancel and grant calls, with the contract's
refusals in the contract's order.

It owns those rules and the bodies they read (``bodies``); it uses the core (``gateway.decision.service``, the
store through it) and never ``gateway.api``: the API parses a request, says what its caller may see
(``sees``), and calls ``inputs.act_on_input`` or ``respond.respond``.
"""
