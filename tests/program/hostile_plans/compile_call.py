# expect: parse-error line=3
def plan():
	compile('kitchen', 'lime', 'fridge')
