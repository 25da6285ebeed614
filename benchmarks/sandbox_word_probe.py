"""Probes the side questions asked about words (not a test): is a word the robot does not know a known object
misheard or described ("the bole", "the little duck"), a thing to point at, or part of the action; is the
person giving a known object that word as a new name; which word of a request names its action ("yo can u grab
the banana": grab); do a lesson's first words give a step or only talk about the lesson; and does a verb ask for
what the seed skills do ("give me the duck") or name a behaviour to teach ("stash the pear"); is a verb a taught
behaviour misheard ("surf" for a taught `serve`); do words about no object ask for something or only talk; do a
lesson's later words give another step or end it? do words whose action is a skill's announce a lesson of the
new name all the same, and do the words that begin a lesson give its first step (copied)? which of two items,
or of two places, named do the words mean in the end?
Each case is asked once, greedily, with the real model.

    PYTHONPATH=src python benchmarks/sandbox_word_probe.py [--model llamacpp:qwen2.5-coder-1.5b] [--threads 2]
        [--only word,naming,action,start,end,verb,slip,request,announce,step,item,place,letgo]

Prints one line per case (ok / BAD), a count per question and, last, one JSON line.
"""

from __future__ import annotations

import argparse
import json
import time

from situated.llm import load
from situated.planners.toolcall import ObjectEntry, ToolCallPlanner
from situated.sandbox.session import is_last_step

_KINDS = {"gift_bag": "container", "tray": "container", "bowl": "container", "plate": "container",
          "box": "container", "table": "place"}
SCENES = {
    "gift_bag": ("candy", "ball", "toy_car", "cube", "duck", "gift_bag", "tray", "table"),
    "fruit_bowl": ("banana", "apple", "strawberry", "bowl", "table"),
    "sorting": ("apple", "banana", "pear", "bottle", "soup_can", "plate", "box", "table"),
}
# (scene, request, word, answer: a known object's plan name, "thing", "action" or "talk")
WORD_CASES = (
    ("gift_bag", "pick up the little duck please", "little", "duck"),
    ("gift_bag", "can you grab the yellow duck", "yellow", "duck"),
    ("gift_bag", "put the orange ball in the bag", "orange", "ball"),
    ("gift_bag", "move the tiny candy to the tray", "tiny", "candy"),
    ("fruit_bowl", "pass me the ripe banana", "ripe", "banana"),
    ("fruit_bowl", "put the big red apple in the bowl", "red", "apple"),
    ("sorting", "the empty bottle goes in the box", "empty", "bottle"),
    ("sorting", "put the dented soup can on the plate", "dented", "soup_can"),
    ("gift_bag", "put the marker in the tray", "marker", "thing"),
    ("gift_bag", "go to the stapler", "stapler", "thing"),
    ("fruit_bowl", "put the orange in the bowl", "orange", "thing"),
    ("sorting", "pick up the green spoon", "spoon", "thing"),
    ("gift_bag", "put the candy in the gift back", "back", "gift_bag"),
    ("fruit_bowl", "put the banan in the bole", "bole", "bowl"),
    ("fruit_bowl", "put the lemon in the bowl", "lemon", "thing"),
    ("gift_bag", "give me the pen", "pen", "thing"),
    ("sorting", "put the mug on the plate", "mug", "thing"),
    ("gift_bag", "put the teddy bear in the gift bag", "teddy", "thing"),
    ("sorting", "the crushed can goes in the box", "crushed", "soup_can"),
    ("gift_bag", "drop the shiny cube in the tray", "shiny", "cube"),
    ("gift_bag", "tidy the table", "tidy", "action"),
    ("fruit_bowl", "make a fruit salad with the apple", "salad", "action"),
    ("sorting", "the dishes keep piling up, so put the bottle in the box", "dishes", "talk"),
    ("gift_bag", "my boss is watching, quick, put the ball in the tray", "boss", "talk"),
    ("fruit_bowl", "ugh this weather. can you hand me the banana", "weather", "talk"),
    ("gift_bag", "put the ball in the tray, I need it for my nephew", "nephew", "talk"),
    # a lesson's name, or the kind of thing it is for, in the words that announce it (heldout24's two, four others)
    ("fruit_bowl", "yay!! now im gonna teach you how to hide a fruit, first grab the strawberry", "fruit", "action"),
    ("sorting", 'Now I am teach you new thing, it call "dish".', "dish", "action"),
    ("gift_bag", "let me show you how to stow a toy", "toy", "action"),
    ("gift_bag", 'I will teach you a new word: "nest"', "nest", "action"),
    ("fruit_bowl", "can you learn how to peel a fruit for me", "fruit", "action"),
    ("sorting", "this one is called binning, watch me", "binning", "action"),
)
# (request, word, known objects the request names, answer: the object named, or "no")
NAMING_CASES = (
    ("when I say the sweet, I mean the candy", "sweet", ("candy",), "candy"),
    ("let's call the gift bag the sack", "sack", ("gift_bag",), "gift_bag"),
    ("from now on the bowl is the dish", "dish", ("bowl",), "bowl"),
    ("the banana is called nana now", "nana", ("banana",), "banana"),
    ("I'll call the soup can tin from now on", "tin", ("soup_can",), "soup_can"),
    ("the duck's name is quacky", "quacky", ("duck",), "duck"),
    ("pick up the little duck", "little", ("duck",), "no"),
    ("grab the yellow duck please", "yellow", ("duck",), "no"),
    ("put the ripe banana in the bowl", "ripe", ("banana", "bowl"), "no"),
    ("move the empty bottle to the box", "empty", ("bottle", "box"), "no"),
    ("could you grab the small ball for me", "small", ("ball",), "no"),
    ("put the marker in the tray", "marker", ("tray",), "no"),
    ("put the sweet on the tray", "sweet", ("tray",), "no"),
    ("wrap the candy in the paper", "paper", ("candy",), "no"),
)

# (request, the word that names what is to be done or learned)
ACTION_CASES = (
    ("hey robot can you pick up the duck", "pick"),
    ("yo grab the ball real quick", "grab"),
    ("good morning! please tidy up the cube", "tidy"),
    ("I will show you how to pack the candy", "pack"),
    ("let me teach you to sort the fruit", "sort"),
    ("ok, new routine. call it stow. it takes an item", "stow"),
    ("execute a grasp on the bottle", "grasp"),
    ("perform a drop of the pear into the box", "drop"),
    ("hiya, fetch the apple would ya", "fetch"),
    ("now I teach you serve the banana", "serve"),
    ("could you please move the soup can to the plate, thanks", "move"),
    ("sorry to bother you, hand me the strawberry", "hand"),
    ("wrap the toy car", "wrap"),
    ("um so like, stash the duck", "stash"),
    ("Good day. Today I teach you new work. I show you how to bin the pear.", "bin"),
    ("right, listen up: I'm gonna teach ya to park the toy car", "park"),
    ("can you make a salad with the apple", "make"),
    ("do a little dance with the duck", "do"),
    ("build a tower with the cube", "build"),
    ("no wait, I meant the tray", "NONE"),
    ("nope, not the plate. the box", "NONE"),
    ("oops sorry, the other bowl", "NONE"),
)
# (request, its verb, answer: "known" if the seed skills do it as they are, "new" if it is a behaviour to teach)
VERB_CASES = (
    ("give me the duck", "give", "known"), ("gimme the ball", "gimme", "known"),
    ("hand over the candy", "hand", "known"), ("could you grab the pear", "grab", "known"),
    ("place the apple in the bowl", "place", "known"), ("hold the banana for me", "hold", "known"),
    ("move the bottle to the box", "move", "known"), ("take the cube out of the tray", "take", "known"),
    ("let go of it", "let", "known"), ("pick up the toy car", "pick", "known"),
    ("toss the ball onto the table", "toss", "known"), ("carry the soup can over to the plate", "carry", "known"),
    ("pop the candy into the bag", "pop", "known"), ("chuck the ball in the tray", "chuck", "known"),
    ("shove the pear into the box", "shove", "known"), ("plop the apple on the plate", "plop", "known"),
    ("pack the ball", "pack", "new"), ("stash the pear", "stash", "new"), ("show off the duck", "show", "new"),
    ("serve the apple", "serve", "new"), ("wrap the candy", "wrap", "new"), ("park the toy car", "park", "new"),
    ("bin the bottle", "bin", "new"), ("stage the cube", "stage", "new"), ("archive the soup can", "archive", "new"),
    ("quarantine the cube", "quarantine", "new"), ("present the banana", "present", "new"),
    ("commit the candy", "commit", "new"), ("sort the fruit", "sort", "new"), ("store the bottle", "store", "new"),
    # the word found may be what the person will do themselves, not the robot
    ("pass me the pear, I'm hungry and want to eat it", "eat", "known"),
    ("hand me the ball so I can throw it", "throw", "known"), ("give me the bottle, I need a drink", "drink", "known"),
    ("could you get me the toy car, my son wants to play", "play", "known"),
    ("wrap the candy, she will eat it later", "eat", "new"),
    ("stash the duck so the kids can't find it", "find", "new"),
)
# (the person's words about no object, answer: "request" or "talk")
REQUEST_CASES = (
    ("wave at me", "request"), ("tidy up the table", "request"), ("do a little spin", "request"),
    ("clean up, please", "request"), ("sort everything", "request"), ("show me a bow", "request"),
    ("I've got a dinner party to set up, so let's be quick", "talk"), ("practice makes perfect, my coach said", "talk"),
    ("we're packing for the holidays today", "talk"), ("haha you're funny", "talk"),
    ("my daughter is turning five tomorrow", "talk"), ("slow and steady wins the race", "talk"),
)
# (request, its verb, taught behaviours whose names sound like it, answer: one of them or "new")
SLIP_CASES = (
    ("surf the banana", "surf", ("serve",), "serve"), ("park the duck", "park", ("pack",), "new"),
    ("now stosh the ball", "stosh", ("stash",), "stash"), ("rap the candy", "rap", ("wrap",), "wrap"),
    ("pak the pear", "pak", ("pack",), "pack"), ("stack the cube", "stack", ("stash",), "new"),
    ("sore the bottle", "sore", ("store",), "store"), ("sort the apple", "sort", ("store",), "new"),
    ("hide the candy", "hide", ("head",), "new"), ("tuk the duck in", "tuk", ("tuck",), "tuck"),
)
# (behaviour being taught, the person's words before any step, answer: "talk" or "step")
START_CASES = (
    ("pack", "great, so I'll show you how to pack the ball", "talk"),
    ("pack", "pick up the ball", "step"),
    ("sort", "sorting means putting fruit in the box. watch", "talk"),
    ("sort", "go to the apple", "step"),
    ("stow", "ok here's how stowing goes", "talk"),
    ("stow", "first, grab the bottle", "step"),
    ("hide", "alright then, let me teach you hiding the duck", "talk"),
    ("hide", "move over the tray", "step"),
    ("serve", "you don't know it? fine, I'll show you, it's quick", "talk"),
    ("serve", "take the banana", "step"),
    ("park", "First you pick up the toy car.", "step"),
    ("park", "Then you go to the tray.", "step"),
    ("park", "parking is easy, I'll walk you through parking the toy car", "talk"),
)


# (behaviour being taught, the person's words during the lesson, answer: "step" or "over")
END_CASES = (
    ("bin", "go ovr to the bin", "step"),
    ("shelve", "now move over to the shelf", "step"),
    ("basket", "then hover over the basket", "step"),
    ("crate", "come over here to the crate", "step"),
    ("box", "swing it over to the box", "step"),
    ("jar", "take it ovr to the jar", "step"),
    ("stow", "go over the box and let go", "step"),
    ("toss", "pick it up", "step"),
    ("toss", "open your hand", "step"),
    ("toss", "ok now go back home", "step"),
    ("sink", "drop it over the sink", "step"),
    ("fetch", "grab the cup first", "step"),
    ("stack", "thats how u stack stuff", "over"),
    ("fold", "ok, that's it, you've learned it", "over"),
    ("wipe", "done, that's wiping", "over"),
    ("fold", "and that's all there is to folding", "over"),
    ("sort", "great, now you know how to sort", "over"),
    ("toss", "that's the whole thing", "over"),
    ("toss", "finished! that was tossing", "over"),
    ("file", "there, that's how we file something", "over"),
    ("bin", "lesson over, well done", "over"),
    ("park", "ok you got it, that's parking", "over"),
    ("recyle", "go ovr to the box", "step"),
    ("plop", "After, you go to over the bowl.", "step"),
    ("squirrel", "Now float it over to the gift bag, dear.", "step"),
    ("tuck", "move it over the tray now", "step"),
    ("hide", "and over to the bag you go", "step"),
    ("nest", "lift it up and over", "step"),
    ("plop", "Finish. This is plop.", "over"),
    ("recyle", "thats how u recyle stuf", "over"),
    ("squirrel", "There, that's all there is to squirreling something away.", "over"),
    ("stow", "over and out, that's stowing", "over"),
    # a step with praise or a sign-off after it (heldout25's two, four of my own)
    ("yeet", "Drop it. Congrats.", "step"),
    ("retrieve", "and let it go period", "step"),
    ("stack", "let go of it. nice", "step"),
    ("water", "now pour it out, good job", "step"),
    ("file", "release it. perfect.", "step"),
    ("nest", "then back home, well done", "step"),
    ("hoist", "Finish. This is how to hoist.", "over"),    # heldout26_05's
    ("wax", "End. So that is waxing.", "over"),
    ("discard", "Release.", "step"),                       # heldout26_08's
)

# (the unknown behaviour's name, the words it was answered for, answer: "teach" or "other")
ANNOUNCE_CASES = (
    ("yo", "yo can u grab the duck", "other"),
    ("hi", "hi there! pick up the ball please", "other"),
    ("present", "Now I'll teach you to present things. Step one: pick up the cube.", "teach"),
    ("show", "I show you how to serve the banana", "other"),
    ("stash", "wanna learn stashing? first grab the candy", "teach"),
    ("sorry", "sorry, I meant pick up the apple", "other"),
    ("bin", "this is how you bin something: pick up the bottle", "teach"),
    ("thanks", "thanks! now go to the tray", "other"),
    ("misspoke", "I misspoke: take the pear, not the banana", "other"),
    ("gift", "lesson time, it's called gift. to start, go over to the duck", "teach"),
    ("okay", "okay now grab the toy car", "other"),
    ("shelve", "you're going to learn to shelve, begin by taking the soup can", "teach"),
    ("please", "please could you pick up the strawberry", "other"),
    ("stow", "let me teach you stowing: grab the ball first", "teach"),
    # announcements with no step yet, and talk that says a verb (one heldout26's, four of my own)
    ("perch", "ok ima teach u smth new, its called perch", "teach"),
    ("polish", "new lesson now. it's named polish", "teach"),
    ("nest", "I'll show you a thing I call nesting, ready?", "teach"),
    ("wrap", "my wife would wrap presents every Christmas", "other"),
    ("bake", "we bake bread on sundays, you know", "other"),
)

# (the behaviour a lesson begins, the words that began it, answer: the first step's words or "")
STEP_CASES = (
    ("park", "I'll teach you to park. First pick up the toy car.", "pick up the toy car"),
    ("park", "let me show you how to park the toy car", ""),
    ("stash", "new trick, stashing! step one, grab the candy", "grab the candy"),
    ("stash", "stash the candy for me", ""),
    ("bin", "you'll learn binning now. start by going over to the bottle", "going over to the bottle"),
    ("bin", "I want to teach you to bin things, it's easy", ""),
    ("serve", "this is serving: take the banana, no, the apple", "take the banana, no, the apple"),
    ("serve", "do you know how to serve? no? I'll show you", ""),
    ("toss", "teach u toss. frst pik up the ball", "pik up the ball"),
    ("toss", "Can you learn a trick called toss? Toss the cube.", ""),
    ("hide", "Let's learn hide. To begin, kindly move over to the tray.", "move over to the tray"),
    ("hide", "time for a lesson: hide", ""),
)

# (the person's words, the two items they name, answer: the item meant in the end)
ITEM_CASES = (
    ("pick up the duck, no wait, the ball", ("ball", "duck"), "ball"),
    ("grab the apple. sorry, I meant the banana", ("apple", "banana"), "banana"),
    ("put the cube in the tray, leave the candy", ("candy", "cube"), "cube"),
    ("first take the pear — no, actually the bottle", ("bottle", "pear"), "bottle"),
    ("get the strawberry, not the apple", ("apple", "strawberry"), "strawberry"),
    ("move the toy car to the bag, the duck stays", ("duck", "toy_car"), "toy_car"),
    ("the soup can, I mean, no, the bottle goes in the box", ("bottle", "soup_can"), "bottle"),
    ("pick up the banana please, the apple is for later", ("apple", "banana"), "banana"),
)

# (the person's words, the two places they name, answer: the place meant in the end)
PLACE_CASES = (
    ("put it on the table, no, in the bowl", ("bowl", "table"), "bowl"),       # heldout24_05's
    ("go to the plate, no, sorry, the box", ("box", "plate"), "box"),
    ("drop it in the gift bag. wait, on the tray", ("gift_bag", "tray"), "tray"),
    ("put the ball in the tray, not the gift bag", ("gift_bag", "tray"), "tray"),
    ("set it down on the plate, uh, no, the table", ("plate", "table"), "table"),
    ("take it to the box, actually the plate is better", ("box", "plate"), "plate"),
    ("put it on the table, the bowl is full", ("bowl", "table"), "table"),
    ("into the bowl. no. on the table", ("bowl", "table"), "table"),
    ("move over to the tray — no wait — the bag", ("gift_bag", "tray"), "gift_bag"),
    ("put the pear in the box, next to the plate", ("box", "plate"), "box"),
)

# (a lesson's step with an item in hand, answer: "release" or "hold")
LET_GO_CASES = (
    ("put it on the tray", "release"),
    ("then you take it over to the bowl", "hold"),
    ("swing over to the plate", "hold"),
    ("drop it in the gift bag", "release"),
    ("now move over to the box", "hold"),
    ("place it in the bowl", "release"),
    ("bring it above the tray", "hold"),
    ("stick it in the box", "release"),
    ("go to the gift bag with it", "hold"),
    ("and pop it on the plate", "release"),
    ("carry the apple to the bowl", "hold"),
    ("put the ball into the gift bag", "release"),
    # steps that name no place, planned go_home() (two of the development sessions', four of my own)
    ("and open your hand", "release"),
    ("Open the hand.", "release"),
    ("now let it fall", "release"),
    ("unclench", "release"),
    ("now go back home with it", "hold"),
    ("return to your start position", "hold"),
)


def entries(names: tuple[str, ...]) -> list[ObjectEntry]:
    return [ObjectEntry(n, kind=_KINDS.get(n, "item")) for n in names]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="llamacpp:qwen2.5-coder-1.5b")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--only",
                        default="word,naming,action,start,end,verb,slip,request,announce,step,item,place,letgo",
                        help="the questions to probe (comma list)")
    args = parser.parse_args()
    opts = {"n_threads": args.threads} if args.model.startswith("llamacpp:") else {}
    planner = ToolCallPlanner(load(args.model, **opts))
    results: dict[str, dict[str, float]] = {}
    for question, cases in (("word", WORD_CASES), ("naming", NAMING_CASES), ("action", ACTION_CASES),
                            ("start", START_CASES), ("end", END_CASES), ("verb", VERB_CASES), ("slip", SLIP_CASES),
                            ("request", REQUEST_CASES), ("announce", ANNOUNCE_CASES), ("step", STEP_CASES),
                            ("item", ITEM_CASES), ("place", PLACE_CASES), ("letgo", LET_GO_CASES)):
        if question not in args.only.split(","):
            continue
        right, start = 0, time.perf_counter()
        for case in cases:
            if question == "word":
                scene, request, word, want = case
                got = planner.word_kind(word, request, entries(SCENES[scene]))[0]
            elif question == "naming":
                request, word, named, want = case
                got = planner.named_as(word, request, entries(named))[0] or "no"
            elif question == "action":
                (request, want), word = case, ""
                got = planner.action_word(request)[0] or "none"
            elif question == "verb":
                request, word, want = case
                got = "new" if planner.verb_is_new(word, request)[0] else "known"
            elif question == "request":
                (request, want), word = case, ""
                got = "talk" if planner.only_talk(request)[0] else "request"
            elif question == "slip":
                request, word, taught, want = case
                got = planner.taught_verb(word, request, taught)[0] or "new"
            elif question == "item":
                request, word, want = case
                got = planner.item_meant(request, word)[0] or "none"
            elif question == "place":
                request, word, want = case
                got = planner.place_meant(request, word)[0] or "none"
            elif question == "letgo":
                (request, want), word = case, ""
                got = "hold" if planner.only_carries(request)[0] else "release"
            elif question == "announce":
                word, request, want = case
                got = "teach" if planner.lesson_announced(word, request)[0] else "other"
            elif question == "step":
                word, request, want = case
                got = planner.first_step(word, request)[0].strip(" .").lower()
                want = want.lower()
            elif question == "end":
                word, request, want = case
                over = planner.lesson_over(word, request)[0]
                last = planner.last_step(word, request)[0] if over else ""
                got = "step" if not over or is_last_step(word, request, last) else "over"
            else:
                word, request, want = case
                got = "talk" if planner.lesson_talk(word, request)[0] else "step"
            right += got == want
            print(f"{question} {'ok ' if got == want else 'BAD'} {request!r} {word!r} -> {got} (want {want})",
                  flush=True)
        seconds = time.perf_counter() - start
        print(f"{question}: {right}/{len(cases)} right, {seconds:.1f} s")
        results[question] = {"right": right, "cases": len(cases), "seconds": round(seconds, 1)}
    print(json.dumps({"model": args.model, **results}))


if __name__ == "__main__":
    main()
